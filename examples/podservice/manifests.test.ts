// Proves every PodService manifest is accepted by the real API server (server-side dry run),
// including the in-cluster variants that the local demo never applies.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { NotFoundError } from 'metacontroller-ts/kube'
import { NAMESPACES } from 'metacontroller-ts/kube'
import { startControlPlane } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'

const run = promisify(execFile)
const MANIFESTS = [
  'crd.yaml',
  'controller.yaml',
  'controller-in-cluster.yaml',
  'sample.yaml',
  'hook-deployment.yaml',
]
// A dry run does not create namespaces, so objects inside them need them to exist.
const NEEDED_NAMESPACES = ['metacontroller', 'pocs-kubernetes-metacontroller']

describe('PodService manifests', () => {
  let plane: ControlPlane
  const created: string[] = []

  before(async () => {
    plane = await startControlPlane({
      crds: ['deploy/crds/compositecontrollers.yaml', 'examples/podservice/crd.yaml'],
    })
    for (const name of NEEDED_NAMESPACES) {
      try {
        await plane.client.get(NAMESPACES, name)
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error
        await plane.client.create(NAMESPACES, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name },
        })
        created.push(name)
      }
    }
  })

  after(async () => {
    for (const name of created) await plane.client.delete(NAMESPACES, name).catch(() => undefined)
    await plane.stop()
  })

  for (const file of MANIFESTS) {
    it(`accepts ${file} in a server-side dry run`, async () => {
      const { stdout } = await run('kubectl', [
        '--kubeconfig',
        plane.kubeconfigPath,
        'apply',
        '--dry-run=server',
        '-f',
        `examples/podservice/${file}`,
      ])
      const lines = stdout.trim().split('\n')
      assert.ok(lines.length > 0 && lines.every((l) => l.endsWith('(server dry run)')), stdout)
    })
  }
})
