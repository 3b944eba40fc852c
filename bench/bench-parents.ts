// The parent resource, hook and controller the engine benchmarks share (engine-parents.ts runs the
// engine in its own process, engine-process.ts runs `metactl run`): a BenchParent CRD whose sync
// hook returns two ConfigMaps (data carries the parent's spec.n) and a status.
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { KubeObject } from '../src/core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../src/kube/dynamic-client.js'
import { startControlPlane } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS } from './bench-cluster.js'

/** The benchmark's parent resource. */
export const PARENTS: ResourceRef = {
  group: 'bench.metacontroller-ts.dev',
  version: 'v1',
  resource: 'benchparents',
  namespaced: true,
}

/** The CRD of {@link PARENTS}: schemaless, with a status subresource. */
export const PARENT_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'benchparents.bench.metacontroller-ts.dev' },
  spec: {
    group: 'bench.metacontroller-ts.dev',
    scope: 'Namespaced',
    names: { plural: 'benchparents', singular: 'benchparent', kind: 'BenchParent' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
}

/** A BenchParent named `name` in `namespace` with `spec.n`. */
export function benchParent(name: string, namespace: string, n: number): KubeObject {
  return {
    apiVersion: 'bench.metacontroller-ts.dev/v1',
    kind: 'BenchParent',
    metadata: { name, namespace },
    spec: { n },
  }
}

/** What the sync hook answers for a parent: two ConfigMaps `<name>-a`, `<name>-b` and a status. */
export function desired(parent: KubeObject): {
  status: Record<string, unknown>
  children: KubeObject[]
} {
  const name = parent.metadata.name ?? ''
  const n = String((parent['spec'] as { n?: number } | undefined)?.n ?? '')
  return {
    status: { ready: true },
    children: ['a', 'b'].map((suffix) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-${suffix}` },
      data: { parent: name, part: suffix, n },
    })),
  }
}

/**
 * The CompositeController spec: generateSelector, ConfigMap children updated InPlace, the sync
 * hook in-process (no URL) or a webhook, optionally in ETag mode (`webhook.etag.enabled`).
 */
export function controllerSpec(hookUrl?: string, etag = false): Record<string, unknown> {
  const webhook = etag ? { url: hookUrl, etag: { enabled: true } } : { url: hookUrl }
  return {
    generateSelector: true,
    parentResource: { apiVersion: 'bench.metacontroller-ts.dev/v1', resource: 'benchparents' },
    childResources: [
      { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
    ],
    hooks: { sync: hookUrl === undefined ? {} : { webhook } },
  }
}

/** Requests a {@link serveWebhook} hook answered so far. */
export interface HookCounts {
  requests: number
  ok: number
  notModified: number
}

/** A running benchmark webhook. */
export interface BenchWebhook {
  readonly url: string
  readonly counts: Readonly<HookCounts>
  close(): Promise<void>
}

/**
 * Serves the sync hook on 127.0.0.1. With `etag`, every 200 carries an `ETag` (a hash of the
 * body) and a request whose `If-None-Match` matches the answer it would give gets a 304 without a
 * body, as upstream's ETag protocol has it.
 */
export async function serveWebhook(options: { etag?: boolean } = {}): Promise<BenchWebhook> {
  const counts: HookCounts = { requests: 0, ok: 0, notModified: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      counts.requests++
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { parent: KubeObject }
      const text = JSON.stringify(desired(body.parent))
      if (options.etag !== true) {
        counts.ok++
        res.writeHead(200, { 'content-type': 'application/json' }).end(text)
        return
      }
      const etag = `"${createHash('sha1').update(text).digest('base64url')}"`
      if (req.headers['if-none-match'] === etag) {
        counts.notModified++
        res.writeHead(304, { etag }).end()
        return
      }
      counts.ok++
      res.writeHead(200, { 'content-type': 'application/json', etag }).end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sync`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

/** True when a parent's status carries its current generation (the engine synced it). */
export function parentSynced(parent: KubeObject): boolean {
  const status = parent['status'] as { observedGeneration?: number; ready?: boolean } | undefined
  return status?.ready === true && status.observedGeneration === parent.metadata.generation
}

/** Every parent synced at its generation and every child there, with data `n` as `want` says. */
export async function parentsConverged(
  client: DynamicClient,
  ns: string,
  count: number,
  want: (child: KubeObject) => boolean = () => true
): Promise<boolean> {
  const parents = await client.list(PARENTS, { namespace: ns })
  if (parents.items.filter(parentSynced).length < count) return false
  const children = await client.list(CONFIGMAPS, { namespace: ns, labelSelector: 'controller-uid' })
  return children.items.filter(want).length >= 2 * count
}

/**
 * Starts the engine benchmarks' control plane (or connects to the existing one with
 * `METACTL_USE_EXISTING_CLUSTER=1`): no nodes, the BenchParent CRD and the Metacontroller CRDs.
 */
export function startBenchPlane(): Promise<ControlPlane> {
  return startControlPlane({
    useExistingCluster: process.env['METACTL_USE_EXISTING_CLUSTER'] === '1',
    // No Pods here: the smaller plane keeps the figures in docs/performance.md comparable.
    nodes: 0,
    crds: [
      PARENT_CRD,
      'deploy/crds/compositecontrollers.yaml',
      'deploy/crds/decoratorcontrollers.yaml',
      'deploy/crds/controllerrevisions.yaml',
    ],
  })
}
