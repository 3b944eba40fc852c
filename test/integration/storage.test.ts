// Proves the storage every local cluster with nodes gets: a default StorageClass whose
// provisioner (kube-controller-manager's host-path plugin) binds a claim that names no class, a
// Pod mounting the claim is scheduled and Running on a simulated node, the volume's directory is
// in the cluster's own directory (not the host's /tmp), reclaiming deletes it, and stopping the
// cluster removes the volumes. Starts its own plane (one simulated node) in a directory it checks.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { PODS } from '../../src/kube/well-known-resources.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  DEFAULT_STORAGE_CLASS,
  HOST_PATH_PROVISIONER,
  PROVISIONER_ROOT,
  volumesDir,
} from '../../src/cluster/host-path-storage.js'
import { mountedElsewhere } from '../../src/cluster/real-node/created-dirs-registry.js'

const STORAGE_CLASSES: ResourceRef = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'storageclasses',
  namespaced: false,
}
const PVCS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  namespaced: true,
}
const PVS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumes',
  namespaced: false,
}
const WAIT = { timeoutMs: 60_000, intervalMs: 200 }

interface ClaimView extends KubeObject {
  spec?: { volumeName?: string; storageClassName?: string }
  status?: { phase?: string }
}
interface VolumeView extends KubeObject {
  spec?: { hostPath?: { path: string }; persistentVolumeReclaimPolicy?: string }
}

function claim(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  }
}

describe('storage (default StorageClass, host-path provisioner)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-storage-'))
  let plane: ControlPlane | undefined

  before(async () => {
    plane = await startControlPlane({ dir, useExistingCluster: false, nodes: 1 })
  })

  after(async () => {
    await plane?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  function client(): ControlPlane['client'] {
    assert.ok(plane, 'the control plane started')
    return plane.client
  }

  async function bound(name: string): Promise<{ claim: ClaimView; volume: VolumeView }> {
    const c = await waitFor(
      async () => {
        const got = await client().get<ClaimView>(PVCS, name, { namespace: 'default' })
        return got.status?.phase === 'Bound' ? got : undefined
      },
      { ...WAIT, description: `claim ${name} to be Bound` }
    )
    const volume = await client().get<VolumeView>(PVS, c.spec?.volumeName ?? '')
    return { claim: c, volume }
  }

  it('has one default StorageClass, served by the host-path provisioner', async () => {
    const classes = await client().list(STORAGE_CLASSES)
    const defaults = classes.items.filter(
      (c) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true'
    )
    assert.deepEqual(
      defaults.map((c) => [c.metadata.name, (c as { provisioner?: string }).provisioner]),
      [[DEFAULT_STORAGE_CLASS, HOST_PATH_PROVISIONER]]
    )
  })

  it('binds a claim that names no class to a new volume in the cluster directory', async () => {
    await client().create(PVCS, claim('data'))
    const { claim: c, volume } = await bound('data')
    assert.equal(c.spec?.storageClassName, DEFAULT_STORAGE_CLASS)
    const path = volume.spec?.hostPath?.path ?? ''
    assert.match(path, new RegExp(`^${PROVISIONER_ROOT}/[0-9a-f-]{36}$`))
    // The provisioner made it through the bind: it is in the cluster's directory only.
    assert.ok(existsSync(join(volumesDir(dir), basename(path))), `${path} in ${volumesDir(dir)}`)
    assert.equal(existsSync(path), false, `${path} is not on the host`)
  })

  it('schedules a Pod that mounts the claim and runs it on a simulated node', async () => {
    await client().create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'uses-data', namespace: 'default' },
      spec: {
        containers: [
          { name: 'app', image: 'app:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      },
    })
    const pod = await waitFor(
      async () => {
        const p = await client().get(PODS, 'uses-data', { namespace: 'default' })
        const status = p['status'] as { phase?: string } | undefined
        return status?.phase === 'Running' ? p : undefined
      },
      { ...WAIT, description: 'the Pod with the claim to be Running' }
    )
    assert.equal((pod['spec'] as { nodeName?: string }).nodeName, 'metactl-node-0')
  })

  it('deletes the volume and its directory when the claim is deleted (reclaim Delete)', async () => {
    await client().create(PVCS, claim('scratch'))
    const { volume } = await bound('scratch')
    assert.equal(volume.spec?.persistentVolumeReclaimPolicy, 'Delete')
    const onDisk = join(volumesDir(dir), basename(volume.spec.hostPath?.path ?? ''))
    assert.ok(existsSync(onDisk))
    await client().delete(PVCS, 'scratch', { namespace: 'default' })
    await waitFor(
      async () => {
        try {
          await client().get(PVS, volume.metadata.name ?? '')
          return false
        } catch (error) {
          if (error instanceof NotFoundError) return !existsSync(onDisk)
          throw error
        }
      },
      { ...WAIT, description: 'the volume and its directory to be deleted' }
    )
  })

  it('removes the volumes, and the mount point unless another cluster mounts there, on stop', async () => {
    assert.ok(plane)
    assert.ok(readdirSync(volumesDir(dir)).length > 0, 'the bound claim has its directory')
    const stopping = plane
    plane = undefined
    await stopping.stop()
    assert.equal(existsSync(volumesDir(dir)), false)
    assert.ok(!existsSync(PROVISIONER_ROOT) || mountedElsewhere(PROVISIONER_ROOT))
  })
})
