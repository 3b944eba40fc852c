// Every command that needs a cluster, run without one (a kubeconfig whose API server refuses
// connections, no kubeconfig at all, no local cluster and no binaries to start one), prints one
// line that says what to do, and no stack trace.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { findFreePort } from 'metacontroller-ts/testing'
import { metactl } from '../support/run-metactl.js'
import type { MetactlResult } from '../support/run-metactl.js'

/** Asserts a failed run printed exactly one `metactl:` line on stderr, matching `expected`. */
function assertOneLine(result: MetactlResult, expected: RegExp): void {
  assert.equal(result.code, 1, result.stderr)
  const lines = result.stderr.trimEnd().split('\n')
  const last = lines.at(-1) ?? ''
  assert.match(last, /^metactl: /)
  assert.match(last, expected)
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace')
  assert.equal(lines.filter((line) => line.startsWith('metactl:')).length, 1, result.stderr)
}

describe('metactl without a cluster', { timeout: 120_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-no-cluster-'))
  const home = join(work, 'home')
  const project = join(work, 'project')
  const kubeconfig = join(work, 'kubeconfig')
  // A fresh HOME with no kubeconfig, no local cluster and no control-plane binaries.
  const freshEnv: NodeJS.ProcessEnv = {
    HOME: home,
    KUBECONFIG: undefined,
    XDG_CACHE_HOME: undefined,
    XDG_STATE_HOME: undefined,
    METACTL_CONTROLPLANE_BIN: join(work, 'no-binaries'),
    METACTL_KWOK_BIN: join(work, 'no-binaries', 'kwok'),
  }
  let server = ''

  before(async () => {
    mkdirSync(home)
    // A loopback port nothing listens on: every connection is refused.
    server = `https://127.0.0.1:${await findFreePort()}`
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: down, cluster: {server: "${server}"}}]`,
        'users: [{name: me, user: {token: t}}]',
        'contexts: [{name: down, context: {cluster: down, user: me}}]',
        'current-context: down',
      ].join('\n')
    )
    const init = await metactl(['init', project])
    assert.equal(init.code, 0, init.stderr)
  })

  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  const unreachable = (): RegExp =>
    new RegExp(
      `cannot reach the Kubernetes API server at ${server.replace(/\./g, '\\.')} \\(ECONNREFUSED\\): ` +
        'start the local cluster with `metactl cluster up`.*--kubeconfig/--context'
    )

  it('tree, with the API server down, says how to start or pick a cluster', async () => {
    assertOneLine(await metactl(['tree', 'configmap/x', '--kubeconfig', kubeconfig]), unreachable())
  })

  it('tree, with no kubeconfig at all, says how to give one', async () => {
    assertOneLine(
      await metactl(['tree', 'configmap/x'], { env: freshEnv }),
      /no kubeconfig found: .*pass --kubeconfig or set KUBECONFIG/
    )
  })

  it('dev, with the given API server down, says how to start or pick a cluster', async () => {
    assertOneLine(
      await metactl(['dev', '--dir', project, '--kubeconfig', kubeconfig]),
      unreachable()
    )
  })

  it('dev, with no local cluster and no binaries, names the command that installs them', async () => {
    assertOneLine(
      await metactl(['dev', '--dir', project], { env: freshEnv }),
      /metactl cluster install/
    )
  })

  it('cluster install, without Go, says Go is needed or another cluster', async () => {
    assertOneLine(
      await metactl(['cluster', 'install'], {
        env: { ...freshEnv, PATH: dirname(process.execPath) },
      }),
      /needs Go >= 1\.26 \(no `go` on PATH\): install Go and run it again, or use a running cluster with --kubeconfig\/--context/
    )
  })

  it('version still reports the client side, and the server as unreachable', async () => {
    const result = await metactl(['version', '--kubeconfig', kubeconfig])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /server: +unreachable: .*ECONNREFUSED/)
  })
})
