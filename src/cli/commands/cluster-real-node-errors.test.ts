import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { main } from '../main.js'

describe('metactl cluster up --runtime containerd on a machine without the node parts', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-up-missing-'))
  const saved = process.env['METACTL_NODE_BIN']
  after(() => {
    if (saved === undefined) delete process.env['METACTL_NODE_BIN']
    else process.env['METACTL_NODE_BIN'] = saved
    rmSync(work, { recursive: true, force: true })
  })

  it("says what is missing and the package's command that builds it, without a stack", async () => {
    process.env['METACTL_NODE_BIN'] = join(work, 'no-node-bin')
    const err: string[] = []
    const code = await main(
      ['node', 'metactl', 'cluster', 'up', '--runtime', 'containerd', '--dir', join(work, 'c')],
      { out: () => undefined, err: (line) => err.push(line) }
    )
    assert.equal(code, 1)
    const text = err.join('\n')
    assert.match(text, /metactl: a real node cannot start on this machine; it needs:/)
    assert.match(
      text,
      /kubelet, .* in \S+no-node-bin: run `metactl cluster install --runtime containerd` \(it runs `bash \S+\/tools\/node\/build\.sh`\)/
    )
    assert.doesNotMatch(text, /make node/)
    assert.doesNotMatch(text, /^\s+at /m)
  })
})
