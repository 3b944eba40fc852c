// Related-object events: what one event costs the customize manager as parents grow, in memory.
//
//   node --import tsx bench/related-events.ts [parents=1000,10000] [events=300]
//
// Each parent's customize answer (cached before the clock starts) selects the ConfigMaps
// labelled with its name in its namespace; each event updates one such ConfigMap, which wakes
// exactly one parent. The manager walks every parent's cached answer per event, as upstream's
// customize.Manager does: the figure shows what that walk costs.
import type { KubeObject } from '../src/core/kube-object.js'
import { RelatedObjectsManager } from '../src/engine/customize/related-objects-manager.js'
import type { ResourceInfo } from '../src/kube/resource-map.js'
import type { Informer, InformerHandlers } from '../src/runtime/informers/informer.js'
import { silentLogger } from '../src/runtime/diagnostics/logger.js'
import { ObjectStore } from '../src/runtime/informers/object-store.js'
import type { InformerLease } from '../src/runtime/informers/shared-informers.js'

const sizes = (process.argv[2] ?? '1000,10000').split(',').map(Number)
const events = Number(process.argv[3] ?? 300)

const CONFIGMAPS: ResourceInfo = {
  ref: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  apiVersion: 'v1',
  kind: 'ConfigMap',
  responseKind: undefined,
  singularName: 'configmap',
  verbs: ['list', 'watch'],
  shortNames: [],
  categories: [],
  subresources: [],
}

function configMap(name: string, app: string, resourceVersion: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', labels: { app }, resourceVersion: String(resourceVersion) },
  }
}

async function measure(count: number): Promise<{ us: number; cpuUs: number; woken: number }> {
  const handlers: InformerHandlers[] = []
  // Only what the manager reads of an informer: a synced store and its subscriptions.
  const informer = {
    description: 'configmaps.v1',
    store: new ObjectStore(),
    hasSynced: () => true,
    subscribe: (h: InformerHandlers) => {
      handlers.push(h)
      return () => undefined
    },
  } as unknown as Informer
  const lease: InformerLease = { informer, release: () => Promise.resolve() }
  const manager = new RelatedObjectsManager({
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'cc' },
    },
    customize: (request) =>
      Promise.resolve({
        relatedResources: [
          {
            apiVersion: 'v1',
            resource: 'configmaps',
            labelSelector: { matchLabels: { app: request.parent.metadata.name ?? '' } },
          },
        ],
      }),
    customizeVersion: 'v1',
    parentNamespaced: true,
    informers: { acquire: <T extends KubeObject>() => lease as unknown as InformerLease<T> },
    discovery: { resolveResource: () => Promise.resolve(CONFIGMAPS) },
    log: silentLogger,
  })
  const parents: KubeObject[] = Array.from({ length: count }, (_, i) => ({
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: `p${i}`, namespace: 'ns', uid: `uid-${i}`, generation: 1 },
  }))
  let woken = 0
  manager.bind({ list: () => parents, enqueue: () => (woken += 1) })
  const signal = new AbortController().signal
  for (const parent of parents) await manager.relatedObjects(parent, signal)
  const fire = (from: number, to: number): void => {
    for (let i = from; i < to; i += 1) {
      const app = `p${i % count}`
      for (const h of handlers)
        h.onUpdate?.(configMap(`cm-${i}`, app, i), configMap(`cm-${i}`, app, i + 1))
    }
  }
  fire(0, Math.min(events, 200)) // warm-up
  woken = 0
  const start = performance.now()
  const cpu = process.cpuUsage()
  fire(0, events)
  const { user, system } = process.cpuUsage(cpu)
  const us = ((performance.now() - start) * 1000) / events
  await manager.stop()
  // CPU time too: on a shared machine the wall clock also counts the time other processes ran.
  return { us, cpuUs: (user + system) / events, woken: woken / events }
}

for (const count of sizes) {
  const { us, cpuUs, woken } = await measure(count)
  console.log(
    `related-events: ${String(count)} parents: ${us.toFixed(0)} µs per event ` +
      `(${cpuUs.toFixed(0)} µs of CPU), ${String(woken)} parent(s) woken per event`
  )
}
