import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { installClusterBinaries, packagedBuildScripts } from './cluster-install.js'

function recorder(): { io: { out(l: string): void; err(l: string): void }; lines: string[] } {
  const lines: string[] = []
  return {
    lines,
    io: {
      out: (line) => lines.push(`out ${line}`),
      err: (line) => lines.push(`err ${line}`),
    },
  }
}

function script(path: string, body: string): string {
  writeFileSync(path, `#!/usr/bin/env bash\nset -euo pipefail\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

describe('metactl cluster install', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-install-'))
  const fakeBin = join(work, 'path')
  mkdirSync(fakeBin)
  script(join(fakeBin, 'go'), 'echo go1.26.8')
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('ships the build scripts it runs', () => {
    const scripts = packagedBuildScripts()
    assert.ok(existsSync(scripts.controlplane), scripts.controlplane)
    assert.ok(existsSync(scripts.kwok), scripts.kwok)
  })

  it('runs only the scripts for what is missing and prints their lines with the time spent', async () => {
    const dir = join(work, 'bin')
    mkdirSync(dir)
    writeFileSync(join(dir, 'kube-apiserver'), '', { mode: 0o755 })
    const env = {
      PATH: `${fakeBin}:${process.env['PATH'] ?? ''}`,
      METACTL_CONTROLPLANE_BIN: dir,
      METACTL_KWOK_BIN: join(dir, 'kwok'),
    }
    const controlplane = script(
      join(work, 'controlplane.sh'),
      [
        'echo "controlplane: [1/3] go mod download" >&2',
        'for b in etcd kube-controller-manager kube-scheduler; do',
        '  printf "" > "$CONTROLPLANE_BIN/$b" && chmod +x "$CONTROLPLANE_BIN/$b"',
        'done',
        'echo "$CONTROLPLANE_BIN"',
      ].join('\n')
    )
    const kwok = script(
      join(work, 'kwok.sh'),
      'echo "kwok: [2/2] go build" >&2\nprintf "" > "$KWOK_BIN" && chmod +x "$KWOK_BIN"'
    )
    const { io, lines } = recorder()
    let clockMs = 0
    await installClusterBinaries({
      io,
      env,
      scripts: { controlplane, kwok },
      now: () => (clockMs += 30_000),
    })
    assert.match(
      lines[0] ?? '',
      /^err Building etcd, kube-controller-manager, kube-scheduler, kwok from Go modules/
    )
    assert.match(
      lines[1] ?? '',
      /A cold build takes about 16 min on 2 idle cores, up to an hour on busy ones/
    )
    assert.match(lines[2] ?? '', /^err {3}\[\d\d:\d\d\] controlplane: \[1\/3\] go mod download$/)
    assert.match(lines[3] ?? '', /^err {3}\[\d\d:\d\d\] kwok: \[2\/2\] go build$/)
    assert.match(
      lines[4] ?? '',
      /^out Installed etcd, kube-controller-manager, kube-scheduler, kwok in/
    )

    const again = recorder()
    await installClusterBinaries({ io: again.io, env, scripts: { controlplane: '/x', kwok: '/y' } })
    assert.deepEqual(again.lines, [
      `out The local cluster's binaries are installed (${dir}); nothing to build.`,
    ])
  })

  it('says Go is needed, in one line, when it is not on PATH', async () => {
    const { io } = recorder()
    await assert.rejects(
      installClusterBinaries({
        io,
        env: { PATH: join(work, 'empty'), METACTL_CONTROLPLANE_BIN: join(work, 'none') },
      }),
      (error: unknown) =>
        error instanceof CliError &&
        error.message.includes(
          'needs Go >= 1.26 (no `go` on PATH): install Go and run it again, or use a running cluster'
        )
    )
  })

  it('reports a failing build script with its exit code', async () => {
    const { io, lines } = recorder()
    const failing = script(join(work, 'fail.sh'), 'echo "controlplane: boom" >&2\nexit 3')
    await assert.rejects(
      installClusterBinaries({
        io,
        env: {
          PATH: `${fakeBin}:${process.env['PATH'] ?? ''}`,
          METACTL_CONTROLPLANE_BIN: join(work, 'none'),
        },
        scripts: { controlplane: failing, kwok: failing },
      }),
      /fail\.sh failed \(exit 3\)/
    )
    assert.ok(lines.some((line) => line.endsWith('controlplane: boom')))
  })
})
