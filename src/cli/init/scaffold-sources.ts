/**
 * The TypeScript sources and tests of a scaffolded controller project.
 *
 * @module
 */
import type { ScaffoldNames } from './scaffold-names.js'

/** `src/hook.ts`: the typed sync hook. */
export function hookSource(n: ScaffoldNames): string {
  return `/**
 * The sync hook of the ${n.name} controller: for each ${n.kind}, \`spec.replicas\` ConfigMaps
 * holding \`spec.message\`, and a status saying how many exist.
 *
 * The engine calls it with the parent and the children it observes, and makes the cluster match
 * what it returns: it creates, updates and deletes ConfigMaps, and writes the status.
 */
import { defineCompositeHook, listObserved } from 'metacontroller-ts'
import type { ConfigMap } from 'metacontroller-ts'
import type { ${n.kind}, ${n.kind}Status } from './types.js'

/** The sync hook; \`metactl dev\` runs it in-process, \`src/server.ts\` serves it as a webhook. */
export const sync = defineCompositeHook<${n.kind}, ConfigMap, ${n.kind}Status>(({ parent, children }) => {
  const name = parent.metadata.name ?? ''
  const replicas = parent.spec.replicas ?? 1
  const observed = listObserved(children, 'ConfigMap.v1')
  const desired = Array.from(
    { length: replicas },
    (_, index): ConfigMap => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: \`\${name}-\${index}\` },
      data: { message: parent.spec.message },
    })
  )
  return {
    status: { configMaps: observed.length, ready: observed.length === replicas },
    children: desired,
  }
})
`
}

/** `src/server.ts`: the hook as a webhook, for the container image. */
export function serverSource(): string {
  return `/**
 * Serves the hook as a webhook (POST /sync) for the engine running in the cluster. Parents that
 * do not match the CRD's schema are answered 422 with the bad field instead of reaching the hook.
 */
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { serveHooks } from 'metacontroller-ts'
import { sync } from './hook.js'

const crd: unknown = parse(readFileSync(new URL('../deploy/crd.yaml', import.meta.url), 'utf8'))
const server = await serveHooks(
  { '/sync': sync },
  {
    port: Number(process.env['PORT'] ?? 8080),
    host: process.env['HOST'] ?? '127.0.0.1',
    parentCrd: crd,
  }
)
process.stderr.write(\`hook listening on \${server.url}/sync\\n\`)
process.once('SIGTERM', () => {
  void server.close()
})
`
}

/** \`test/hook.test.ts\`: the hook without a cluster. */
export function unitTestSource(n: ScaffoldNames): string {
  return `// The hook without a cluster: callCompositeHook checks its answer as the engine would.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { callCompositeHook } from 'metacontroller-ts'
import type { ConfigMap } from 'metacontroller-ts'
import { sync } from '../src/hook.js'
import type { ${n.kind} } from '../src/types.js'

const parent: ${n.kind} = {
  apiVersion: '${n.group}/${n.version}',
  kind: '${n.kind}',
  metadata: { name: 'hello', namespace: 'default' },
  spec: { message: 'hi', replicas: 2 },
}
const configMap = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
})

describe('sync', () => {
  it('asks for spec.replicas ConfigMaps holding the message', async () => {
    const out = await callCompositeHook(sync, { parent })
    assert.deepEqual(
      out.children.map((c) => [c.metadata?.name, c.data?.['message']]),
      [
        ['hello-0', 'hi'],
        ['hello-1', 'hi'],
      ]
    )
    assert.deepEqual(out.status, { configMaps: 0, ready: false })
  })

  it('is ready once every ConfigMap exists', async () => {
    const out = await callCompositeHook(sync, {
      parent,
      children: {
        'ConfigMap.v1': { 'default/hello-0': configMap('hello-0'), 'default/hello-1': configMap('hello-1') },
      },
    })
    assert.deepEqual(out.status, { configMaps: 2, ready: true })
  })
})
`
}

/** The imports and helpers of \`test/controller.test.ts\`. */
function integrationTestHead(n: ScaffoldNames): string {
  return `// The controller on a real local control plane (etcd + kube-apiserver): the engine runs the
// hook in-process, creates the ConfigMaps and writes the status.
// Without the local cluster's binaries it fails and names the command that installs them
// (npx metactl cluster install). METACTL_USE_EXISTING_CLUSTER=1 runs it on the cluster of
// KUBECONFIG instead (METACTL_CONTEXT picks a context); METACTL_SKIP_CLUSTER_TESTS=1 skips it.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { inProcessHooks } from 'metacontroller-ts'
import type { KubeObject } from 'metacontroller-ts'
import { Engine } from 'metacontroller-ts/engine'
import { CONFIGMAPS, NAMESPACES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import {
  metacontrollerCrdFiles,
  MissingBinariesError,
  readManifestFile,
  startControlPlane,
  waitForParent,
} from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { sync } from '../src/hook.js'
import type { ${n.kind} } from '../src/types.js'

const PARENTS: ResourceRef = { group: '${n.group}', version: '${n.version}', resource: '${n.plural}', namespaced: true }
const skip = process.env['METACTL_SKIP_CLUSTER_TESTS'] === '1' ? 'METACTL_SKIP_CLUSTER_TESTS=1' : false

`
}

/** \`test/controller.test.ts\`: the controller on a real local control plane. */
export function integrationTestSource(n: ScaffoldNames): string {
  return `${integrationTestHead(n)}describe('${n.name} on a local control plane', () => {
  let plane: ControlPlane | undefined
  let engine: Engine | undefined
  const namespace = \`test-\${Date.now().toString(36)}\`
  let noCluster: MissingBinariesError | undefined

  before(async () => {
    if (skip !== false) return
    const crds = [...metacontrollerCrdFiles(), 'deploy/crd.yaml']
    try {
      plane = await startControlPlane({ nodes: 0, crds }) // ConfigMaps need no nodes (nor KWOK)
    } catch (error) {
      // Failed by the test below, so that the summary counts a failure, not a cancellation.
      if (!(error instanceof MissingBinariesError)) throw error
      noCluster = error
      return
    }
    engine = new Engine(plane.config, { watchCompositeControllers: false })
    await engine.start()
    const [controller] = readManifestFile('deploy/controller.yaml')
    assert.ok(controller)
    await engine.addCompositeController({
      name: controller.metadata.name ?? '',
      spec: controller['spec'],
      hooks: inProcessHooks({ sync }),
    })
    await plane.client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } })
  })

  after(async () => {
    await engine?.stop()
    await plane?.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane?.stop()
  })

  it('creates the ConfigMaps and reports them in the status', { skip }, async () => {
    if (noCluster !== undefined) assert.fail(noCluster.message)
    const client = plane?.client
    assert.ok(client)
    const parent: KubeObject = {
      apiVersion: '${n.group}/${n.version}',
      kind: '${n.kind}',
      metadata: { name: 'hello', namespace },
      spec: { message: 'hi', replicas: 2 },
    }
    await client.create(PARENTS, parent)
    // On timeout, the message shows the parent's status and the engine's last SyncError event.
    const ready = await waitForParent(
      client,
      { resource: PARENTS, name: 'hello', namespace },
      (current) => ((current as KubeObject & ${n.kind}).status?.ready === true ? (current as KubeObject & ${n.kind}) : undefined),
      { timeoutMs: 30_000, description: 'the ${n.kind} to be ready' }
    )
    assert.equal(ready.status?.configMaps, 2)
    const maps = await client.list(CONFIGMAPS, { namespace })
    assert.deepEqual(maps.items.map((m) => m.metadata.name).filter((name) => name?.startsWith('hello-')).sort(), ['hello-0', 'hello-1'])
  })
})
`
}
