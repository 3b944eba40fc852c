import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  defaultBinaryDir,
  ETCD_VERSION,
  findControlPlaneBinaries,
  KUBERNETES_VERSION,
  MissingBinariesError,
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

  it('says how to build the binaries when one is missing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'metactl-bin-'))
    try {
      assert.throws(
        () => findControlPlaneBinaries({ METACTL_CONTROLPLANE_BIN: empty }),
        (error: unknown) =>
          error instanceof MissingBinariesError &&
          error.message.includes(join(empty, 'etcd')) &&
          error.message.includes('make controlplane')
      )
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
