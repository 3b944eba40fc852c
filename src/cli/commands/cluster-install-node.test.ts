import assert from 'node:assert/strict'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { HOST_COMMANDS, NODE_BINARIES } from '../../cluster/real-node/node-binaries.js'
import { missingNodeParts } from '../../cluster/real-node/node-parts.js'
import { CliError } from '../cli-error.js'
import { main } from '../main.js'
import { installNodeParts, packagedToolsDir, parseInstallRuntime } from './cluster-install-node.js'

function script(path: string, body: string): string {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, `#!/usr/bin/env bash\nset -euo pipefail\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

function recorder(): { io: { out(l: string): void; err(l: string): void }; lines: string[] } {
  const lines: string[] = []
  return {
    lines,
    io: { out: (line) => lines.push(`out ${line}`), err: (line) => lines.push(`err ${line}`) },
  }
}

describe('metactl cluster install --runtime', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-install-node-'))
  const path = join(work, 'path')
  script(join(path, 'go'), 'echo go1.26.8')
  for (const command of HOST_COMMANDS) script(join(path, command), 'exit 0')
  const env = {
    PATH: `${path}:/usr/bin:/bin`,
    METACTL_NODE_BIN: join(work, 'bin'),
    METACTL_NODE_IMAGES: join(work, 'images'),
    METACTL_COREDNS_DIR: join(work, 'coredns'),
    METACTL_IMAGE_MIRROR_BIN: join(work, 'mirror', 'image-mirror'),
  }
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('accepts kwok and containerd and names both when given anything else', () => {
    assert.equal(parseInstallRuntime('kwok'), 'kwok')
    assert.equal(parseInstallRuntime('containerd'), 'containerd')
    assert.throws(
      () => parseInstallRuntime('docker'),
      (error: unknown) =>
        error instanceof CliError &&
        error.message === '--runtime must be kwok or containerd, got "docker"'
    )
  })

  it('refuses an unknown runtime before building anything, without a stack', async () => {
    const { io, lines } = recorder()
    const code = await main(['node', 'metactl', 'cluster', 'install', '--runtime', 'cri-o'], io)
    assert.equal(code, 1)
    assert.deepEqual(lines, ['err metactl: --runtime must be kwok or containerd, got "cri-o"'])
  })

  it('ships the scripts it runs for every part (in package.json `files`)', () => {
    const files = (
      JSON.parse(readFileSync(join(packagedToolsDir(), '..', 'package.json'), 'utf8')) as {
        files: string[]
      }
    ).files
    const builds = missingNodeParts({ ...env, PATH: '' })
    assert.equal(builds.length, 4)
    for (const build of builds) {
      assert.ok(existsSync(join(packagedToolsDir(), build.script)), build.script)
      assert.ok(files.includes(`tools/${build.script}`), `package.json files has ${build.script}`)
    }
  })

  it('runs the scripts of the missing parts in order, each told where to write', async () => {
    const tools = join(work, 'tools')
    const made = (file: string): string => `mkdir -p "$(dirname "${file}")" && : > "${file}"`
    script(
      join(tools, 'node/build.sh'),
      [
        'echo "node: building" >&2',
        `for b in ${NODE_BINARIES.join(' ')}; do mkdir -p "$NODE_BIN/$(dirname $b)"; : > "$NODE_BIN/$b"; chmod +x "$NODE_BIN/$b"; done`,
      ].join('\n')
    )
    script(
      join(tools, 'node/images.sh'),
      [
        'echo "images: from $NODE_BIN" >&2',
        ...['pause', 'web', 'web-2'].map((i) => made(`$NODE_IMAGES/${i}.tar`)),
      ].join('\n')
    )
    script(join(tools, 'coredns/build.sh'), made('$COREDNS_DIR/coredns.tar'))
    script(
      join(tools, 'image-mirror/build.sh'),
      `${made('$IMAGE_MIRROR_BIN')} && chmod +x "$IMAGE_MIRROR_BIN"`
    )
    assert.deepEqual(
      missingNodeParts(env).map((b) => b.script),
      ['node/build.sh', 'node/images.sh', 'coredns/build.sh', 'image-mirror/build.sh']
    )
    const { io, lines } = recorder()
    await installNodeParts({ io, env, toolsDir: tools, now: () => 0 })
    assert.ok(lines.includes('err   [00:00] node: building'), lines.join('\n'))
    assert.ok(
      lines.includes(`err   [00:00] images: from ${env.METACTL_NODE_BIN}`),
      lines.join('\n')
    )
    assert.equal(lines.at(-2), "out Installed the real node's parts in 00:00 (min:s).")
    assert.deepEqual(missingNodeParts(env), [])

    const again = recorder()
    await installNodeParts({ io: again.io, env, toolsDir: join(work, 'no-tools') })
    assert.deepEqual(again.lines, ["out The real node's parts are installed; nothing to build."])
  })

  it('says which part is still missing when a script wrote nothing', async () => {
    const tools = join(work, 'lazy-tools')
    for (const name of [
      'node/build.sh',
      'node/images.sh',
      'coredns/build.sh',
      'image-mirror/build.sh',
    ])
      script(join(tools, name), 'exit 0')
    const lazy = { ...env, METACTL_COREDNS_DIR: join(work, 'coredns-never') }
    await assert.rejects(
      installNodeParts({ io: recorder().io, env: lazy, toolsDir: tools }),
      (error: unknown) =>
        error instanceof CliError &&
        error.message ===
          `the build finished but these are still missing: ${join(work, 'coredns-never', 'coredns.tar')}`
    )
  })
})
