import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import { FakeClock } from '../clock/fake-clock.js'
import type { ListWatchScope, ListWatcher } from './list-watcher.js'
import { SharedInformers } from './shared-informers.js'
import type { ListWatcherFactory } from './shared-informers.js'
import { settle, until } from '../../../test/support/event-loop-turns.js'
import { MemoryCollection } from '../../../test/support/memory-collection.js'

type ListOptions = Parameters<ListWatcher['listPage']>[0]
type WatchOptions = Parameters<ListWatcher['watch']>[0]

const pods: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }
const deployments: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
}
const nodes: ResourceRef = { group: '', version: 'v1', resource: 'nodes', namespaced: false }

/** A collection of one object whose watch stays open, quietly, until its signal aborts. */
class QuietListWatcher implements ListWatcher {
  readonly description: string
  readonly ref: ResourceRef
  readonly scope: ListWatchScope
  readonly listLimits: number[] = []
  readonly watchSignals: AbortSignal[] = []

  constructor(ref: ResourceRef, scope: ListWatchScope) {
    this.ref = ref
    this.scope = scope
    this.description = `${ref.resource}${scope.namespace === undefined ? '' : ` in ${scope.namespace}`}${scope.labelSelector === undefined ? '' : ` (${scope.labelSelector})`}${scope.fieldSelector === undefined ? '' : ` [${scope.fieldSelector}]`}`
  }

  /** Whether the latest watch is open. */
  get watching(): boolean {
    const signal = this.watchSignals.at(-1)
    return signal !== undefined && !signal.aborted
  }

  listPage(options: ListOptions): Promise<KubeList> {
    this.listLimits.push(options.limit)
    const item: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'only', namespace: 'default', resourceVersion: '1' },
    }
    return Promise.resolve({
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '1' },
      items: [item],
    })
  }

  watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent>> {
    this.watchSignals.push(options.signal)
    const { signal } = options
    return Promise.resolve({
      [Symbol.asyncIterator]: (): AsyncIterator<WatchEvent> => ({
        next: () =>
          new Promise<IteratorResult<WatchEvent>>((_resolve, reject) => {
            const onAbort = (): void => {
              reject(signal.reason as Error)
            }
            if (signal.aborted) onAbort()
            else signal.addEventListener('abort', onAbort, { once: true })
          }),
      }),
    })
  }
}

/** A factory that records every ListWatcher it builds. */
function recordingFactory(): { factory: ListWatcherFactory; built: QuietListWatcher[] } {
  const built: QuietListWatcher[] = []
  return {
    built,
    factory: (ref, scope) => {
      const listWatcher = new QuietListWatcher(ref, scope)
      built.push(listWatcher)
      return listWatcher
    },
  }
}

function only<T>(items: readonly T[]): T {
  assert.equal(items.length, 1)
  const [item] = items
  assert.ok(item !== undefined)
  return item
}

/** Two leases on one pods informer, once it watches: where the release tests start. */
async function twoLeasesOnWatchingPods() {
  const { factory, built } = recordingFactory()
  const shared = new SharedInformers(factory, { clock: new FakeClock() })
  const first = shared.acquire(pods)
  const second = shared.acquire(pods)
  const listWatcher = only(built)
  await until(() => listWatcher.watching, 'the informer watches')
  return { shared, first, second, listWatcher }
}

describe('SharedInformers', () => {
  it('gives two acquires of one collection one started informer over one ListWatcher', async () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const first = shared.acquire(pods, { namespace: 'web', labelSelector: 'app=web' })
    const second = shared.acquire(pods, { namespace: 'web', labelSelector: 'app=web' })
    assert.equal(first.informer, second.informer)
    const listWatcher = only(built)
    assert.deepEqual(listWatcher.scope, { namespace: 'web', labelSelector: 'app=web' })
    await first.informer.waitForSync()
    await until(() => listWatcher.watching, 'the informer watches')
    assert.equal(listWatcher.listLimits.length, 1, 'listed once')
    assert.equal(shared.size, 1)
    await shared.stopAll()
  })

  it('gives a different resource, namespace, label selector or field selector its own informer', () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const leases = [
      shared.acquire(pods),
      shared.acquire(deployments),
      shared.acquire(pods, { namespace: 'a' }),
      shared.acquire(pods, { namespace: 'b' }),
      shared.acquire(pods, { namespace: 'a', labelSelector: 'app=x' }),
      shared.acquire(pods, { namespace: 'a', fieldSelector: 'status.phase=Running' }),
      shared.acquire(pods, { namespace: 'a', labelSelector: 'app=x', fieldSelector: 'x=y' }),
    ]
    assert.equal(new Set(leases.map((lease) => lease.informer)).size, leases.length)
    assert.equal(built.length, leases.length)
    assert.equal(shared.size, leases.length)
    assert.deepEqual(built[5]?.scope, { namespace: 'a', fieldSelector: 'status.phase=Running' })
    return shared.stopAll()
  })

  it('shares one informer between no selector and an empty one, and ignores a cluster-scoped namespace', async () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const all = shared.acquire(pods)
    const empty = shared.acquire(pods, { labelSelector: '', fieldSelector: '' })
    assert.equal(all.informer, empty.informer)
    const cluster = shared.acquire(nodes)
    const namespaced = shared.acquire(nodes, { namespace: 'ignored' })
    assert.equal(cluster.informer, namespaced.informer)
    assert.equal(built.length, 2)
    assert.deepEqual(built[1]?.scope, {}, 'the factory gets the normalized scope')
    await shared.stopAll()
  })

  it('stops the informer only when the last holder releases', async () => {
    const { shared, first, second, listWatcher } = await twoLeasesOnWatchingPods()
    await first.release()
    await settle()
    assert.equal(listWatcher.watching, true, 'still held by the second lease')
    assert.equal(shared.size, 1)
    await second.release()
    assert.equal(listWatcher.watching, false, 'stopped once released by all')
    assert.equal(shared.size, 0)
    assert.deepEqual(shared.status(), [])
  })

  it('drops one hold per lease however many times that lease is released', async () => {
    const { first, second, listWatcher } = await twoLeasesOnWatchingPods()
    await Promise.all([first.release(), first.release()])
    await first.release()
    await settle()
    assert.equal(listWatcher.watching, true, 'the second lease still holds it')
    const releasing = second.release()
    assert.equal(second.release(), releasing, 'a repeated release returns the same promise')
    await releasing
    assert.equal(listWatcher.watching, false)
  })

  it('starts a fresh informer, with a fresh cache, for an acquire after the last release', async () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const first = shared.acquire(pods)
    await first.informer.waitForSync()
    await first.release()
    const again = shared.acquire(pods)
    assert.notEqual(again.informer, first.informer)
    assert.equal(built.length, 2)
    await again.informer.waitForSync()
    assert.equal(again.informer.relists, 1)
    assert.equal(again.informer.store.size, 1)
    await until(() => built[1]?.watching === true, 'the fresh informer watches')
    assert.equal(built[0]?.watching, false, 'the old one stays stopped')
    await again.release()
  })

  it('starts a fresh informer for an acquire while the released one is still stopping', async () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const first = shared.acquire(pods)
    await until(() => built[0]?.watching === true, 'the informer watches')
    const stopping = first.release()
    const again = shared.acquire(pods)
    assert.notEqual(again.informer, first.informer)
    await stopping
    await until(() => built[1]?.watching === true, 'the fresh informer watches')
    assert.equal(built[0]?.watching, false)
    assert.equal(shared.size, 1)
    await again.release()
    assert.equal(shared.size, 0)
  })

  it('stops every informer on stopAll, after which releases do nothing more', async () => {
    const { factory, built } = recordingFactory()
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    const a = shared.acquire(pods)
    const b = shared.acquire(deployments)
    shared.acquire(deployments)
    await until(() => built.every((lw) => lw.watching), 'both informers watch')
    await shared.stopAll()
    assert.equal(
      built.some((lw) => lw.watching),
      false
    )
    assert.equal(shared.size, 0)
    await a.release()
    await b.release()
    const fresh = shared.acquire(deployments)
    assert.equal(built.length, 3, 'a later acquire starts a fresh informer')
    assert.equal(shared.size, 1)
    await fresh.release()
    assert.equal(shared.size, 0)
  })

  it('reports every held informer for readiness, sorted, with the options passed through', async () => {
    const { factory, built } = recordingFactory()
    const clock = new FakeClock()
    const shared = new SharedInformers(factory, { clock, pageSize: 7 })
    const podsLease = shared.acquire(pods, { namespace: 'web' })
    const deploymentsLease = shared.acquire(deployments)
    await podsLease.informer.waitForSync()
    await deploymentsLease.informer.waitForSync()
    clock.advance(250)
    assert.deepEqual(shared.status(), [
      {
        description: 'deployments',
        synced: true,
        lastEventAgeMs: 250,
        relists: 1,
        watchRestarts: 0,
      },
      {
        description: 'pods in web',
        synced: true,
        lastEventAgeMs: 250,
        relists: 1,
        watchRestarts: 0,
      },
    ])
    assert.deepEqual(
      built.map((lw) => lw.listLimits),
      [[7], [7]],
      'pageSize reached the informers'
    )
    await shared.stopAll()
  })

  it('reports an informer that has not synced yet', async () => {
    const gate = new Promise<never>(() => undefined)
    const factory: ListWatcherFactory = (ref, scope) => {
      const listWatcher = new QuietListWatcher(ref, scope)
      listWatcher.listPage = () => gate
      return listWatcher
    }
    const shared = new SharedInformers(factory, { clock: new FakeClock() })
    shared.acquire(pods)
    assert.deepEqual(shared.status(), [
      {
        description: 'pods',
        synced: false,
        lastEventAgeMs: undefined,
        relists: 0,
        watchRestarts: 0,
      },
    ])
    await shared.stopAll()
  })

  it('registers nothing when the factory or the informer constructor throws', () => {
    const shared = new SharedInformers(() => {
      throw new Error('no such resource')
    })
    assert.throws(() => shared.acquire(pods), /no such resource/)
    assert.equal(shared.size, 0)
    assert.deepEqual(shared.status(), [])
    const badOptions = new SharedInformers(recordingFactory().factory, { pageSize: 0 })
    assert.throws(() => badOptions.acquire(pods), RangeError)
    assert.equal(badOptions.size, 0)
  })

  it("remembers a server's refusal of streaming lists for every collection of the resource", async () => {
    const sources: MemoryCollection[] = []
    const shared = new SharedInformers(() => {
      const source = new MemoryCollection()
      source.watchListMode = 'refuse'
      sources.push(source)
      return source
    })
    const first = shared.acquire(pods, { namespace: 'a' })
    await first.informer.waitForSync()
    const sameResource = shared.acquire(pods, { namespace: 'b' })
    await sameResource.informer.waitForSync()
    const otherResource = shared.acquire(deployments)
    await otherResource.informer.waitForSync()
    assert.deepEqual(
      sources.map((source) => source.calls[0]),
      ['watchList', 'list', 'watchList'],
      'the second collection of pods lists at once; deployments still ask'
    )
    await shared.stopAll()
  })
})
