import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import type {
  CustomizeRequest,
  CustomizeResponse,
  RelatedResourceRule,
} from '../../api/hook-model.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import { SharedInformers } from '../../runtime/informers/shared-informers.js'
import { RelatedObjectsManager } from './related-objects-manager.js'
import { CUSTOMIZE_CACHE_CLEANUP_MS } from './customize-cache.js'
import type { CustomizeCacheOptions } from './customize-cache.js'
import { RelatedRuleError } from './related-objects.js'
import { settle, settleMany, until } from '../../../test/support/event-loop-turns.js'

/** One collection: a list held until `open()`, then a watch fed by `emit()`. */
class FakeCollection implements ListWatcher {
  readonly description: string
  items: KubeObject[] = []
  #open: () => void = () => undefined
  readonly #listed: Promise<void>
  readonly #events: WatchEvent[] = []
  #wake: (() => void) | undefined

  constructor(description: string) {
    this.description = description
    this.#listed = new Promise((resolve) => {
      this.#open = resolve
    })
  }

  /** Lets the list answer, with `items`. */
  open(): void {
    this.#open()
  }

  emit(type: WatchEvent['type'], object: KubeObject): void {
    this.#events.push({ type, object })
    this.#wake?.()
  }

  async listPage(): Promise<KubeList> {
    await this.#listed
    return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '1' }, items: this.items }
  }

  watch(options: { signal: AbortSignal }): Promise<AsyncIterable<WatchEvent>> {
    const { signal } = options
    const events = this.#events
    const wait = (): Promise<void> =>
      new Promise((resolve) => {
        this.#wake = resolve
        signal.addEventListener('abort', () => {
          resolve()
        })
      })
    return Promise.resolve({
      async *[Symbol.asyncIterator]() {
        while (!signal.aborted) {
          const event = events.shift()
          if (event !== undefined) yield event
          else await wait()
        }
      },
    })
  }
}

function info(apiVersion: string, resource: string, kind: string, namespaced = true): ResourceInfo {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion]
  const ref: ResourceRef = { group: group ?? '', version: version ?? '', resource, namespaced }
  return {
    ref,
    apiVersion,
    kind,
    responseKind: undefined,
    singularName: '',
    verbs: ['list', 'watch'],
    shortNames: [],
    categories: [],
    subresources: [],
  }
}

const RESOURCES = [
  info('v1', 'configmaps', 'ConfigMap'),
  info('v1', 'secrets', 'Secret'),
  info('v1', 'namespaces', 'Namespace', false),
]

function configMap(name: string, namespace: string, resourceVersion = '1'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion } }
}

function parentObject(name: string, generation = 1): KubeObject {
  return {
    apiVersion: 'test/v1',
    kind: 'Parent',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation },
  }
}

/** A manager over fake collections, a fake discovery and a recording customize hook. */
function harness(
  answer: (parent: KubeObject) => RelatedResourceRule[],
  cache?: CustomizeCacheOptions
) {
  const collections = new Map<string, FakeCollection>()
  const collection = (resource: string): FakeCollection => {
    let found = collections.get(resource)
    if (found === undefined) {
      found = new FakeCollection(resource)
      collections.set(resource, found)
    }
    return found
  }
  const informers = new SharedInformers((ref) => collection(ref.resource))
  const calls: CustomizeRequest[] = []
  const manager = new RelatedObjectsManager({
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'cc' },
    },
    customize: (request): Promise<CustomizeResponse> => {
      calls.push(request)
      return Promise.resolve({ relatedResources: answer(request.parent) })
    },
    customizeVersion: 'v2',
    parentNamespaced: true,
    informers,
    discovery: {
      resolveResource: (apiVersion, resource) => {
        const found = RESOURCES.find(
          (r) => r.apiVersion === apiVersion && r.ref.resource === resource
        )
        return found === undefined
          ? Promise.reject(new Error(`unknown resource ${resource}`))
          : Promise.resolve(found)
      },
    },
    log: silentLogger,
    ...(cache === undefined ? {} : { cache }),
  })
  const parents: KubeObject[] = []
  const enqueued: string[] = []
  manager.bind({
    list: () => parents,
    enqueue: (parent) => enqueued.push(parent.metadata.name ?? ''),
  })
  return { manager, informers, collection, calls, parents, enqueued }
}

const signal = new AbortController().signal

describe('RelatedObjectsManager', () => {
  it('caches the customize answer per parent UID and generation', async () => {
    const h = harness(() => [])
    await h.manager.relatedObjects(parentObject('p'), signal)
    await h.manager.relatedObjects(parentObject('p'), signal)
    assert.equal(h.calls.length, 1)
    await h.manager.relatedObjects(parentObject('p', 2), signal)
    assert.equal(h.calls.length, 2)
    assert.equal(h.calls[0]?.controller.metadata.name, 'cc')
    await h.manager.stop()
  })

  it("drops deleted parents' answers once per cleanup interval", async () => {
    let nowMs = 0
    const h = harness(() => [], { now: () => nowMs })
    const [a, b] = [parentObject('a'), parentObject('b')]
    h.parents.push(a, b)
    await h.manager.relatedObjects(a, signal)
    await h.manager.relatedObjects(b, signal)
    h.parents.splice(1, 1)
    nowMs = CUSTOMIZE_CACHE_CLEANUP_MS - 1
    await h.manager.relatedObjects(a, signal)
    assert.equal(h.manager.cachedAnswers, 2, 'not before the interval')
    nowMs = CUSTOMIZE_CACHE_CLEANUP_MS
    await h.manager.relatedObjects(a, signal)
    assert.equal(h.manager.cachedAnswers, 1, "b's answer is gone, a's kept")
    assert.equal(h.calls.length, 2, "a's answer was not asked for again")
    await h.manager.stop()
  })

  it('shares one hook call between concurrent requests for a parent', async () => {
    const h = harness(() => [])
    await Promise.all([
      h.manager.relatedObjects(parentObject('p'), signal),
      h.manager.relatedObjects(parentObject('p'), signal),
    ])
    assert.equal(h.calls.length, 1)
    await h.manager.stop()
  })

  it('is not synced until the related informer is, then sends one entry per rule', async () => {
    const h = harness(() => [
      { apiVersion: 'v1', resource: 'configmaps', namespace: 'ns', names: ['wanted'] },
      { apiVersion: 'v1', resource: 'secrets', names: ['none'] },
    ])
    const configMaps = h.collection('configmaps')
    configMaps.items = [configMap('wanted', 'ns'), configMap('other', 'ns')]
    await assert.rejects(h.manager.relatedObjects(parentObject('p'), signal), NotSyncedError)
    assert.equal(h.manager.informerCount, 2)
    configMaps.open()
    h.collection('secrets').open()
    await until(() => h.informers.status().every((s) => s.synced), 'the informers synced')
    const related = await h.manager.relatedObjects(parentObject('p'), signal)
    assert.deepEqual([...related.keys()], ['ConfigMap.v1', 'Secret.v1'])
    assert.deepEqual([...(related.get('ConfigMap.v1')?.keys() ?? [])], ['ns/wanted'])
    assert.equal(related.get('Secret.v1')?.size, 0)
    assert.equal(h.informers.size, 2, 'each resource is acquired once')
    await h.manager.stop()
    assert.equal(h.informers.size, 0, 'stop releases every informer')
  })

  it('starts no informer for a rule it refuses', async () => {
    const h = harness(() => [
      { apiVersion: 'v1', resource: 'namespaces', namespaceSelector: { matchLabels: { a: 'b' } } },
    ])
    await assert.rejects(h.manager.relatedObjects(parentObject('p'), signal), RelatedRuleError)
    assert.equal(h.informers.size, 0)
    await h.manager.stop()
  })

  it('waits for the Namespace informer for a namespaceSelector rule', async () => {
    const h = harness(() => [
      {
        apiVersion: 'v1',
        resource: 'configmaps',
        namespaceSelector: { matchLabels: { env: 'prod' } },
      },
    ])
    h.collection('configmaps').items = [configMap('a', 'prod'), configMap('b', 'dev')]
    h.collection('namespaces').items = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod', labels: { env: 'prod' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dev' } },
    ]
    h.collection('configmaps').open()
    await assert.rejects(h.manager.relatedObjects(parentObject('p'), signal), /namespaces/)
    h.collection('namespaces').open()
    await until(() => h.informers.status().every((s) => s.synced), 'the informers synced')
    const related = await h.manager.relatedObjects(parentObject('p'), signal)
    assert.deepEqual([...(related.get('ConfigMap.v1')?.keys() ?? [])], ['prod/a'])
    await h.manager.stop()
  })

  it('wakes the parents whose rules select a changed related object, old or new version', async () => {
    const h = harness((parent) =>
      parent.metadata.name === 'secrets-only'
        ? [{ apiVersion: 'v1', resource: 'secrets', labelSelector: { matchLabels: { app: 'x' } } }]
        : [
            {
              apiVersion: 'v1',
              resource: 'configmaps',
              labelSelector: { matchLabels: { app: 'x' } },
            },
          ]
    )
    h.collection('configmaps').open()
    h.collection('secrets').open()
    const wants = parentObject('wants-x')
    const secretsOnly = parentObject('secrets-only')
    h.parents.push(wants, secretsOnly)
    await until(() => {
      void h.manager.relatedObjects(wants, signal).catch(() => undefined)
      void h.manager.relatedObjects(secretsOnly, signal).catch(() => undefined)
      return h.informers.status().length === 2 && h.informers.status().every((s) => s.synced)
    }, 'the informers synced')
    await settle()
    h.enqueued.length = 0

    const cms = h.collection('configmaps')
    const labelled = {
      ...configMap('a', 'ns', '2'),
      metadata: { ...configMap('a', 'ns', '2').metadata, labels: { app: 'x' } },
    }
    cms.emit('ADDED', labelled)
    await until(() => h.enqueued.length > 0, 'the add woke a parent')
    assert.deepEqual(h.enqueued, ['wants-x'], 'a Secret rule does not match a ConfigMap')

    h.enqueued.length = 0
    cms.emit('ADDED', configMap('unlabelled', 'ns', '3'))
    cms.emit('MODIFIED', labelled)
    await settleMany(10)
    assert.deepEqual(h.enqueued, [], 'an unselected object and a same-resourceVersion update')
    // The label moves away: the old version matched, so the parent is woken.
    cms.emit('MODIFIED', configMap('a', 'ns', '4'))
    await until(() => h.enqueued.length > 0, 'the update woke a parent')
    assert.deepEqual(h.enqueued, ['wants-x'])

    h.enqueued.length = 0
    cms.emit('MODIFIED', { ...labelled, metadata: { ...labelled.metadata, resourceVersion: '5' } })
    cms.emit('DELETED', { ...labelled, metadata: { ...labelled.metadata, resourceVersion: '5' } })
    await until(() => h.enqueued.length === 2, 'the update and the delete woke the parent')
    await h.manager.stop()
  })

  it('asks customize for a parent without a cached answer when a related object changes', async () => {
    const h = harness(() => [{ apiVersion: 'v1', resource: 'configmaps', names: ['a'] }])
    h.collection('configmaps').open()
    const first = parentObject('first')
    await until(() => {
      void h.manager.relatedObjects(first, signal).catch(() => undefined)
      return h.informers.status()[0]?.synced === true
    }, 'the informer synced')
    const callsBefore = h.calls.length
    const fresh = parentObject('fresh')
    h.parents.push(fresh)
    h.collection('configmaps').emit('ADDED', configMap('a', 'ns', '2'))
    await until(() => h.enqueued.includes('fresh'), 'the fresh parent was woken')
    assert.equal(h.calls.length, callsBefore + 1)
    assert.equal(h.calls.at(-1)?.parent.metadata.name, 'fresh')
    await h.manager.stop()
  })
})
