import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  defaultBinaryDir,
  defaultKwokPath,
  ETCD_VERSION,
  findControlPlaneBinaries,
  KUBERNETES_VERSION,
  KWOK_VERSION,
  MissingBinariesError,
  requireNodeBinaries,
} from './control-plane-binaries.js'

describe('control-plane binaries', () => {
  it('agrees with build.sh on versions and cache location', () => {
    const script = readFileSync('tools/controlplane/build.sh', 'utf8')
    assert.match(script, new RegExp(`^KUBE_VERSION=${KUBERNETES_VERSION}$`, 'm'))
    assert.match(script, new RegExp(`^ETCD_VERSION=${ETCD_VERSION}$`, 'm'))
    assert.match(
      script,
      /OUT=\$\{CONTROLPLANE_BIN:-\$CACHE_ROOT\/kube-\$KUBE_VERSION-etcd-\$ETCD_VERSION\}/
    )
    assert.equal(
      defaultBinaryDir({ XDG_CACHE_HOME: '/c' }),
      `/c/metacontroller-ts/controlplane/kube-${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}`
    )
  })

  it('pins the same Kubernetes release in the Go wrapper module', () => {
    const gomod = readFileSync('tools/controlplane/go.mod', 'utf8')
    assert.match(
      gomod,
      new RegExp(`k8s\\.io/kubernetes ${KUBERNETES_VERSION.replace(/\./g, '\\.')}\\b`)
    )
    assert.match(
      gomod,
      new RegExp(`go\\.etcd\\.io/etcd/server/v3 ${ETCD_VERSION.replace(/\./g, '\\.')}\\b`)
    )
  })

  it('agrees with tools/kwok on the KWOK version and cache location', () => {
    const script = readFileSync('tools/kwok/build.sh', 'utf8')
    assert.match(script, new RegExp(`^KWOK_VERSION=${KWOK_VERSION}$`, 'm'))
    assert.match(script, /OUT=\$\{KWOK_BIN:-\$CACHE_ROOT\/kwok-\$KWOK_VERSION\/kwok\}/)
    const gomod = readFileSync('tools/kwok/go.mod', 'utf8')
    assert.match(gomod, new RegExp(`sigs\\.k8s\\.io/kwok ${KWOK_VERSION.replace(/\./g, '\\.')}\\b`))
    assert.equal(
      defaultKwokPath({ XDG_CACHE_HOME: '/c' }),
      `/c/metacontroller-ts/controlplane/kwok-${KWOK_VERSION}/kwok`
    )
  })

  it('builds kube-scheduler with the other Kubernetes binaries', () => {
    assert.match(readFileSync('tools/controlplane/build.sh', 'utf8'), /kube-scheduler/)
    assert.match(
      readFileSync('tools/controlplane/go.mod', 'utf8'),
      /^\s+k8s\.io\/kubernetes\/cmd\/kube-scheduler$/m
    )
  })

  it('finds the scheduler and KWOK when present, and names them when a plane needs them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-bin-'))
    try {
      for (const name of ['etcd', 'kube-apiserver', 'kube-controller-manager']) {
        writeFileSync(join(dir, name), '', { mode: 0o755 })
      }
      const env = { METACTL_CONTROLPLANE_BIN: dir, XDG_CACHE_HOME: join(dir, 'no-cache') }
      const without = findControlPlaneBinaries(env)
      assert.equal(without.kubeScheduler, undefined)
      assert.equal(without.kwok, undefined)
      assert.throws(
        () => requireNodeBinaries(without),
        (error: unknown) =>
          error instanceof MissingBinariesError &&
          error.message.includes(join(dir, 'kube-scheduler')) &&
          error.message.includes('kwok') &&
          error.message.includes('npx metactl cluster install') &&
          error.message.includes('nodes: 0')
      )
      for (const name of ['kube-scheduler', 'kwok']) {
        writeFileSync(join(dir, name), '', { mode: 0o755 })
      }
      const all = findControlPlaneBinaries(env)
      assert.deepEqual(requireNodeBinaries(all), {
        kubeScheduler: join(dir, 'kube-scheduler'),
        kwok: join(dir, 'kwok'),
      })
      const explicit = findControlPlaneBinaries({ ...env, METACTL_KWOK_BIN: '/nowhere/kwok' })
      assert.equal(explicit.kwok, undefined, 'an explicit METACTL_KWOK_BIN is not second-guessed')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('names every missing binary and the one command that installs them', () => {
    const empty = mkdtempSync(join(tmpdir(), 'metactl-bin-'))
    try {
      assert.throws(
        () =>
          findControlPlaneBinaries({
            METACTL_CONTROLPLANE_BIN: empty,
            METACTL_KWOK_BIN: join(empty, 'kwok'),
          }),
        (error: unknown) =>
          error instanceof MissingBinariesError &&
          error.message.includes(
            `missing from ${empty}: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok.`
          ) &&
          error.message.includes('`npx metactl cluster install`') &&
          !error.message.includes('\n')
      )
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
