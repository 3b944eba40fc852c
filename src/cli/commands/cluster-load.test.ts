import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { main } from '../main.js'

async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(['node', 'metactl', ...argv], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  })
  return { code, out, err }
}

describe('metactl cluster load', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-cluster-load-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('takes the cluster as --cluster-dir, the name metactl dev uses, and as its former name --dir', async () => {
    for (const flag of ['--cluster-dir', '--dir']) {
      const dir = join(work, flag.slice(2))
      const { code, err } = await run(['cluster', 'load', flag, dir, 'hook:dev'])
      assert.equal(code, 1)
      assert.deepEqual(err.length, 1)
      assert.ok(err[0]?.includes(`no cluster with a real node in ${dir}:`), err[0])
    }
  })

  it('needs at least one archive or image', async () => {
    const { code, err } = await run(['cluster', 'load', '--dir', work])
    assert.equal(code, 1)
    assert.deepEqual(err, ['metactl: name at least one image archive or image'])
  })

  it('says, in one line without a stack, that a directory without a real node cannot load', async () => {
    const { code, err } = await run(['cluster', 'load', '--dir', work, 'hook:dev'])
    assert.equal(code, 1)
    assert.equal(err.length, 1)
    assert.match(err[0] ?? '', /^metactl: no cluster with a real node in /)
    assert.match(err[0] ?? '', /metactl cluster up --runtime containerd/)
    assert.doesNotMatch(err[0] ?? '', /\n\s+at /)
  })

  it('names the argument that is neither a file nor an image reference', async () => {
    const { code, err } = await run(['cluster', 'load', '--dir', work, 'Not An Image'])
    assert.equal(code, 1)
    assert.deepEqual(err, [
      'metactl: Not An Image is neither an image archive nor an image reference',
    ])
  })
})
