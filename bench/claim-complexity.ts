// Claim complexity: what one sync's reads of the caches cost as unrelated objects in the
// namespace grow 100×, in memory (no control plane).
//
//   node [--expose-gc] --import tsx bench/claim-complexity.ts [small=100] [large=10000] [rounds=5000]
//
// For each read a sync makes (claiming a parent's children, a customize rule's related objects,
// a decorator target's attachments) it prints the objects visited per call and the time per
// call, and, as the reference, the namespace scan the indexes replace. With --expose-gc it also
// measures the label index's heap per object: one key with one value on every object, and one
// with a value per two objects (a generated `controller-uid` selector's shape).
import type { KubeObject } from '../src/core/kube-object.js'
import { equalityTerms } from '../src/core/label-selector.js'
import { DECORATOR_CONTROLLER_ANNOTATION } from '../src/api/decorator-controller-spec.js'
import { claimCandidates } from '../src/engine/children/claim-children.js'
import { relatedSelection, selectRelatedObjects } from '../src/engine/customize/related-objects.js'
import { observeAttachments } from '../src/engine/decorator/sync-decorator-target.js'
import { ObjectStore } from '../src/runtime/informers/object-store.js'

const small = Number(process.argv[2] ?? 100)
const large = Number(process.argv[3] ?? 10_000)
const rounds = Number(process.argv[4] ?? 5000)

const NS = 'bench'

function configMap(
  name: string,
  labels: Record<string, string>,
  controller?: string,
  annotations: Record<string, string> = {}
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      labels,
      annotations,
      ...(controller === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'x/v1',
                kind: 'P',
                name: controller,
                uid: controller,
                controller: true,
              },
            ],
          }),
    },
  }
}

/**
 * Parent p0's two children (also decorator attachments), one orphan it may adopt, and `unrelated`
 * objects: a third children of other parents, a third orphans of other apps, a third related
 * objects of other apps.
 */
function namespaceWith(unrelated: number): ObjectStore {
  const store = new ObjectStore()
  const mine = { app: 'web', 'controller-uid': 'p0' }
  const deco = { [DECORATOR_CONTROLLER_ANNOTATION]: 'deco' }
  store.upsert(configMap('p0-a', mine, 'p0', deco))
  store.upsert(configMap('p0-b', mine, 'p0', deco))
  store.upsert(configMap('orphan', mine))
  store.upsert(configMap('settings', { app: 'web', role: 'settings' }))
  for (let i = 0; i < unrelated; i += 1) {
    const app = `app-${i % 50}`
    if (i % 3 === 0)
      store.upsert(configMap(`child-${i}`, { app, 'controller-uid': `p${i + 1}` }, `p${i + 1}`))
    else if (i % 3 === 1) store.upsert(configMap(`orphan-${i}`, { app }))
    else store.upsert(configMap(`related-${i}`, { app, role: 'settings' }))
  }
  return store
}

const parent: KubeObject = {
  apiVersion: 'x/v1',
  kind: 'P',
  metadata: { name: 'p0', namespace: NS, uid: 'p0' },
}
const selector = { matchLabels: { app: 'web', 'controller-uid': 'p0' } }
const terms = equalityTerms(selector)
const related = relatedSelection(
  {
    apiVersion: 'v1',
    resource: 'configmaps',
    namespace: NS,
    labelSelector: { matchLabels: { app: 'web', role: 'settings' } },
  },
  {
    parent,
    parentNamespaced: true,
    customizeVersion: 'v2',
    resource: { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
  }
)

const reads: Record<string, (store: ObjectStore) => unknown> = {
  'claim candidates': (store) => claimCandidates(store, parent, terms),
  'related objects (labels in a namespace)': (store) => selectRelatedObjects(related, store),
  'decorator attachments': (store) =>
    observeAttachments('deco', ['ConfigMap.v1'], parent, new Map([['ConfigMap.v1', store]])),
  'reference: namespace scan': (store) => store.listByNamespace(NS),
}

/** Calls a read up to `rounds` times or for 300 ms, whichever ends first, after as many warm-ups. */
function measure(
  store: ObjectStore,
  read: (store: ObjectStore) => unknown
): { visits: number; us: number } {
  const run = (): { calls: number; ms: number } => {
    const start = performance.now()
    let calls = 0
    while (calls < rounds && performance.now() - start < 300) {
      read(store)
      calls += 1
    }
    return { calls, ms: performance.now() - start }
  }
  // The first calls index label keys (once per cache, not per sync) and warm the JIT up.
  run()
  const before = store.visits
  const { calls, ms } = run()
  return { visits: (store.visits - before) / calls, us: (ms * 1000) / calls }
}

const stores = [small, large].map((unrelated) => ({ unrelated, store: namespaceWith(unrelated) }))
console.log(
  `claim-complexity: up to ${String(rounds)} calls (300 ms) per figure; unrelated objects ${String(small)} → ${String(large)}`
)
for (const [name, read] of Object.entries(reads)) {
  const [a, b] = stores.map(({ store }) => measure(store, read))
  if (a === undefined || b === undefined) continue
  console.log(
    `${name}: visits ${String(a.visits)} → ${String(b.visits)}; ` +
      `${a.us.toFixed(2)} µs → ${b.us.toFixed(2)} µs per call`
  )
}

const gc = (globalThis as { gc?: () => void }).gc
if (gc !== undefined) {
  const heapAfterGc = (): number => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  const count = large * 2
  const store = new ObjectStore()
  for (let i = 0; i < count; i += 1) {
    // Parsed, as an informer's objects are: no string shared by the source text.
    const labels = JSON.parse(`{"app":"web","controller-uid":"p${i >> 1}"}`) as Record<
      string,
      string
    >
    store.upsert(configMap(`cm-${i}`, labels))
  }
  const perObject = (key: string): string => {
    const before = heapAfterGc()
    store.listMatching({ labels: [{ key, values: ['none'] }] })
    return ((heapAfterGc() - before) / count).toFixed(0)
  }
  const shared = perObject('app')
  const unique = perObject('controller-uid')
  console.log(
    `label index heap over ${String(count)} objects: ${shared} bytes per object (one value for ` +
      `all), ${unique} bytes per object (one value per two objects)`
  )
}
