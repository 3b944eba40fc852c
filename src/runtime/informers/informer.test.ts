import { objectKey } from '../../core/object-key.js'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import { GoneError } from '../../kube/api-error.js'
import type { WatchEvent, WatchEventType } from '../../kube/watch-event.js'
import { FakeClock } from '../clock/fake-clock.js'
import { Informer, WatchStatusError } from './informer.js'
import type { InformerObserver, InformerOptions } from './informer.js'
import type { ListWatcher } from './list-watcher.js'
import { settleMany, until } from '../../../test/support/event-loop-turns.js'

type ListOptions = Parameters<ListWatcher['listPage']>[0]
type WatchOptions = Parameters<ListWatcher['watch']>[0]

/** A promise that stays pending until opened; optionally rejects when a signal aborts. */
class Gate {
  #open: () => void = () => undefined
  readonly #promise = new Promise<void>((resolve) => {
    this.#open = resolve
  })

  /** Lets every waiter through. */
  open(): void {
    this.#open()
  }

  /** Waits for the gate; with a signal, rejects with its reason once it aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    if (signal === undefined) return this.#promise
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        reject(signal.reason as Error)
      }
      if (signal.aborted) onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      void this.#promise.then(resolve)
    })
  }
}

type Step =
  | { readonly kind: 'event'; readonly event: WatchEvent }
  | { readonly kind: 'end' }
  | { readonly kind: 'error'; readonly error: Error }

/** One scripted watch stream: the test pushes events into it, ends it or makes it fail. */
class FakeWatch implements AsyncIterable<WatchEvent> {
  readonly options: WatchOptions
  /** Whether the informer closed the iterator. */
  returned = false
  readonly #respectAbort: boolean
  readonly #steps: Step[] = []
  #waiter:
    { resolve: (r: IteratorResult<WatchEvent>) => void; reject: (e: Error) => void } | undefined

  constructor(options: WatchOptions, respectAbort: boolean) {
    this.options = options
    this.#respectAbort = respectAbort
    if (respectAbort) {
      options.signal.addEventListener(
        'abort',
        () => {
          this.#wake()
        },
        { once: true }
      )
    }
  }

  /** Whether the informer aborted the signal it gave this watch. */
  get aborted(): boolean {
    return this.options.signal.aborted
  }

  push(type: WatchEventType, object: KubeObject): void {
    this.#steps.push({ kind: 'event', event: { type, object } })
    this.#wake()
  }

  end(): void {
    this.#steps.push({ kind: 'end' })
    this.#wake()
  }

  fail(error: Error): void {
    this.#steps.push({ kind: 'error', error })
    this.#wake()
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () =>
        new Promise<IteratorResult<WatchEvent>>((resolve, reject) => {
          this.#waiter = { resolve, reject }
          this.#wake()
        }),
      return: () => {
        this.returned = true
        return Promise.resolve({ done: true, value: undefined })
      },
    }
  }

  #wake(): void {
    const waiter = this.#waiter
    if (waiter === undefined) return
    if (this.#respectAbort && this.options.signal.aborted) {
      this.#waiter = undefined
      waiter.reject(this.options.signal.reason as Error)
      return
    }
    const step = this.#steps[0]
    if (step === undefined) return
    this.#waiter = undefined
    if (step.kind === 'end') {
      // An ended stream stays ended.
      waiter.resolve({ done: true, value: undefined })
      return
    }
    this.#steps.shift()
    if (step.kind === 'event') waiter.resolve({ done: false, value: step.event })
    else waiter.reject(step.error)
  }
}

/** An in-memory collection served in pages, with scripted failures, hangs and watch streams. */
class FakeListWatcher implements ListWatcher {
  readonly description = 'pods.v1 (fake)'
  /** What the next list returns, in order, paginated by the requested limit. */
  objects: KubeObject[] = []
  /** The list's resourceVersion. */
  resourceVersion = '100'
  /** The continue token of every listPage call, `undefined` for a first page. */
  readonly listCalls: (string | undefined)[] = []
  /** Failures of the next listPage calls, in order; `undefined` lets a call succeed. */
  readonly listFailures: (Error | undefined)[] = []
  /** When set, listPage waits for it, ignoring its abort signal (a hung connection). */
  listGate: Gate | undefined
  /** The resourceVersion of every watch call, including the ones that failed. */
  readonly watchCalls: string[] = []
  /** Failures of the next watch calls, in order; `undefined` lets a call succeed. */
  readonly watchFailures: (Error | undefined)[] = []
  /** When set, watch waits for it before returning a stream, honouring its abort signal. */
  watchGate: Gate | undefined
  /** Whether streams stop when their signal aborts; false simulates a half-open connection. */
  watchRespectsAbort = true
  /** Called with each stream as it opens, to script it. */
  onWatch: ((watch: FakeWatch, index: number) => void) | undefined
  readonly watches: FakeWatch[] = []

  async listPage(options: ListOptions): Promise<KubeList> {
    this.listCalls.push(options.continue)
    if (this.listGate !== undefined) await this.listGate.wait()
    const failure = this.listFailures.shift()
    if (failure !== undefined) throw failure
    const offset = options.continue === undefined ? 0 : Number(options.continue)
    const next = offset + options.limit
    return {
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: {
        resourceVersion: this.resourceVersion,
        ...(next < this.objects.length ? { continue: String(next) } : {}),
      },
      items: this.objects.slice(offset, next),
    }
  }

  async watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent>> {
    this.watchCalls.push(options.resourceVersion)
    const failure = this.watchFailures.shift()
    if (failure !== undefined) throw failure
    if (this.watchGate !== undefined) await this.watchGate.wait(options.signal)
    const watch = new FakeWatch(options, this.watchRespectsAbort)
    this.watches.push(watch)
    this.onWatch?.(watch, this.watches.length - 1)
    return watch
  }

  /** The stream opened last. */
  get current(): FakeWatch {
    const watch = this.watches.at(-1)
    assert.ok(watch !== undefined, 'a watch is open')
    return watch
  }
}

/** Builds a pod, optionally in a namespace and with a controller owner. */
function pod(
  name: string,
  resourceVersion: string,
  extra: {
    readonly namespace?: string
    readonly owner?: string
    readonly controller?: boolean
  } = {}
): KubeObject {
  const owner = extra.owner
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      resourceVersion,
      ...(owner === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: `rs-${owner}`,
                uid: owner,
                controller: extra.controller ?? true,
              },
            ],
          }),
    },
  }
}

/** A bookmark carrying only a resourceVersion. */
function bookmark(resourceVersion: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion } }
}

/** An in-stream `Status` error with this code. */
function statusObject(code: number, message: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code, message }
}

/** A 410 as the HTTP layer raises it. */
function goneError(): GoneError {
  return new GoneError('GET /api/v1/pods: 410 Expired', {
    statusCode: 410,
    reason: 'Expired',
    request: { method: 'GET', path: '/api/v1/pods' },
  })
}

function rv(object: KubeObject): string {
  return object.metadata.resourceVersion ?? ''
}

/** Everything the observer saw, as strings and numbers easy to assert on. */
interface ObserverLog {
  readonly lifecycle: string[]
  readonly errors: unknown[]
  readonly delays: number[]
  readonly handlerErrors: unknown[]
}

function recordingObserver(): { observer: InformerObserver; seen: ObserverLog } {
  const seen: ObserverLog = { lifecycle: [], errors: [], delays: [], handlerErrors: [] }
  return {
    seen,
    observer: {
      onRelist: (_description, reason) => seen.lifecycle.push(`relist ${reason}`),
      onWatchRestart: (_description, reason) => seen.lifecycle.push(`restart ${reason}`),
      onError: (_description, error, retryInMs) => {
        seen.errors.push(error)
        seen.delays.push(retryInMs)
      },
      onHandlerError: (_description, error) => seen.handlerErrors.push(error),
    },
  }
}

/** Subscribes a handler that logs every call as `add ns/name@rv`, `update …@a->b`, `delete …@rv`. */
function record(informer: Informer): string[] {
  const log: string[] = []
  informer.subscribe({
    onAdd: (object) => log.push(`add ${objectKey(object)}@${rv(object)}`),
    onUpdate: (old, object) => log.push(`update ${objectKey(object)}@${rv(old)}->${rv(object)}`),
    onDelete: (object) => log.push(`delete ${objectKey(object)}@${rv(object)}`),
  })
  return log
}

/** Backoff of 100, 200, 400, 800, 1600, 1600 … ms, with no jitter. */
const testBackoff = { baseMs: 100, maxMs: 1600, jitter: 0 }

/** Builds an informer over a fake source and clock, with a recording observer and handler. */
function setup(options: Omit<InformerOptions, 'clock' | 'observer'> = {}): {
  clock: FakeClock
  source: FakeListWatcher
  informer: Informer
  log: string[]
  seen: ObserverLog
} {
  const clock = new FakeClock()
  const source = new FakeListWatcher()
  const { observer, seen } = recordingObserver()
  const informer = new Informer(source, {
    random: () => 0,
    backoff: testBackoff,
    ...options,
    clock,
    observer,
  })
  const log = record(informer)
  return { clock, source, informer, log, seen }
}

/** Starts the informer and waits until its first watch is open. */
async function startAndWatch(context: ReturnType<typeof setup>): Promise<void> {
  context.informer.start()
  await until(() => context.source.watches.length === 1, 'the first watch opens')
}

function sortedKeys(objects: readonly KubeObject[]): string[] {
  return objects.map((object) => objectKey(object)).sort()
}

describe('Informer', () => {
  describe('initial list', () => {
    it('lists every page with its continue token, fills the cache and then marks itself synced', async () => {
      const context = setup({ pageSize: 2 })
      const { source, informer, log } = context
      source.objects = ['a', 'b', 'c', 'd', 'e'].map((name) => pod(name, '7'))
      const gate = new Gate()
      source.listGate = gate
      let synced = false
      const waiting = informer.waitForSync().then(() => {
        synced = true
      })
      informer.start()
      await settleMany()
      assert.equal(informer.hasSynced(), false)
      assert.equal(synced, false, 'waitForSync waits for the list')
      assert.equal(informer.store.size, 0)
      gate.open()
      await waiting
      assert.deepEqual(source.listCalls, [undefined, '2', '4'])
      assert.equal(informer.hasSynced(), true)
      assert.equal(informer.relists, 1)
      assert.deepEqual(sortedKeys(informer.store.list()), [
        'default/a',
        'default/b',
        'default/c',
        'default/d',
        'default/e',
      ])
      assert.deepEqual(log, [
        'add default/a@7',
        'add default/b@7',
        'add default/c@7',
        'add default/d@7',
        'add default/e@7',
      ])
      await until(() => source.watches.length === 1, 'the watch opens')
      assert.deepEqual(source.watchCalls, ['100'], 'watches from the list resourceVersion')
      assert.equal(await informer.waitForSync().then(() => 'resolved'), 'resolved')
      await informer.stop()
    })

    it('makes the whole list visible at once: no reader sees a partly applied list', async () => {
      const context = setup({ pageSize: 1 })
      const { source, informer } = context
      source.objects = [pod('a', '1'), pod('b', '1'), pod('c', '1')]
      const sizesSeenByHandler: number[] = []
      informer.subscribe({ onAdd: () => sizesSeenByHandler.push(informer.store.size) })
      await startAndWatch(context)
      assert.deepEqual(sizesSeenByHandler, [3, 3, 3])
      await informer.stop()
    })

    it('rejects waitForSync when its signal aborts before the list completes', async () => {
      const context = setup()
      context.source.listGate = new Gate()
      context.informer.start()
      const abort = new AbortController()
      const waiting = context.informer.waitForSync(abort.signal)
      abort.abort(new Error('gave up'))
      await assert.rejects(waiting, /gave up/)
      await assert.rejects(context.informer.waitForSync(abort.signal), /gave up/)
      const stopping = context.informer.stop()
      context.source.listGate.open()
      await stopping
    })
  })

  describe('watch events', () => {
    it('delivers ADDED, MODIFIED with old and new, and DELETED with the last known object', async () => {
      const context = setup()
      const { source, informer, log } = context
      source.objects = [pod('a', '1')]
      await startAndWatch(context)
      log.length = 0
      const updates: [KubeObject, KubeObject][] = []
      const deletes: KubeObject[] = []
      informer.subscribe({
        onUpdate: (old, object) => updates.push([old, object]),
        onDelete: (object) => deletes.push(object),
      })
      const a2 = pod('a', '102')
      const b = pod('b', '101')
      source.current.push('ADDED', b)
      source.current.push('MODIFIED', a2)
      const bDeleted = pod('b', '103')
      source.current.push('DELETED', bDeleted)
      await until(() => log.length === 3, 'three events are handled')
      assert.deepEqual(log, [
        'add default/b@101',
        'update default/a@1->102',
        'delete default/b@103',
      ])
      assert.equal(updates.length, 1)
      assert.equal(rv(updates[0]?.[0] ?? bookmark('')), '1', 'old object is the cached one')
      assert.equal(updates[0]?.[1], a2)
      assert.equal(deletes[0], bDeleted)
      assert.equal(informer.store.get('default/a'), a2)
      assert.equal(informer.store.get('default/b'), undefined)
      assert.equal(informer.store.size, 1)
      await informer.stop()
    })

    it('emits nothing for a MODIFIED event whose resourceVersion the cache already has', async () => {
      const context = setup()
      const { source, informer, log } = context
      source.objects = [pod('a', '5')]
      await startAndWatch(context)
      log.length = 0
      source.current.push('MODIFIED', pod('a', '5'))
      source.current.push('ADDED', pod('z', '6'))
      await until(() => log.length > 0, 'an event is handled')
      assert.deepEqual(log, ['add default/z@6'])
      await informer.stop()
    })

    it('advances the resourceVersion on a BOOKMARK without emitting or changing the cache', async () => {
      const context = setup()
      const { source, informer, log } = context
      source.objects = [pod('a', '1')]
      await startAndWatch(context)
      log.length = 0
      source.current.push('BOOKMARK', bookmark('150'))
      source.current.end()
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual(source.watchCalls, ['100', '150'])
      assert.deepEqual(log, [])
      assert.deepEqual(sortedKeys(informer.store.list()), ['default/a'])
      assert.equal(informer.relists, 1)
      await informer.stop()
    })

    it('re-watches from the last resourceVersion after a normal end, without relisting', async () => {
      const context = setup()
      const { source, informer, seen } = context
      await startAndWatch(context)
      source.current.push('ADDED', pod('a', '101'))
      source.current.push('MODIFIED', pod('a', '104'))
      source.current.end()
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual(source.watchCalls, ['100', '104'])
      assert.equal(informer.relists, 1)
      assert.equal(informer.watchRestarts, 0, 'a normal end is not a restart')
      assert.deepEqual(seen.lifecycle, ['relist initial'])
      assert.deepEqual(seen.errors, [])
      await informer.stop()
    })

    it('answers a DELETED event for an object it never cached with that object', async () => {
      const context = setup()
      const { source, informer, log } = context
      await startAndWatch(context)
      source.current.push('DELETED', pod('ghost', '101'))
      await until(() => log.length === 1, 'the delete is handled')
      assert.deepEqual(log, ['delete default/ghost@101'])
      assert.equal(informer.store.size, 0)
      await informer.stop()
    })
  })

  describe('relist on 410 Gone', () => {
    /** Syncs a, b, c at resourceVersion 1, then changes the server to a (same), b (new RV), d. */
    async function syncedThenChanged(): Promise<ReturnType<typeof setup>> {
      const context = setup()
      const { source, log } = context
      source.objects = [pod('a', '1'), pod('b', '1'), pod('c', '1')]
      await startAndWatch(context)
      assert.deepEqual(log, ['add default/a@1', 'add default/b@1', 'add default/c@1'])
      log.length = 0
      source.objects = [pod('a', '1'), pod('b', '5'), pod('d', '5')]
      source.resourceVersion = '200'
      return context
    }

    const expectedDiff = ['add default/d@5', 'delete default/c@1', 'update default/b@1->5']

    it('relists after an in-stream ERROR 410 and emits exactly the difference', async () => {
      const context = await syncedThenChanged()
      const { source, informer, log, seen } = context
      source.current.push('ERROR', statusObject(410, 'too old resource version: 1 (150)'))
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual([...log].sort(), expectedDiff)
      assert.equal(informer.relists, 2)
      assert.deepEqual(source.watchCalls, ['100', '200'], 'watches from the new list')
      assert.deepEqual(sortedKeys(informer.store.list()), ['default/a', 'default/b', 'default/d'])
      assert.deepEqual(seen.lifecycle, ['relist initial', 'relist gone'])
      assert.deepEqual(seen.errors, [], 'a 410 is not reported as an error')
      await informer.stop()
    })

    it('relists after watch() throws a GoneError and emits exactly the difference', async () => {
      const context = await syncedThenChanged()
      const { source, informer, log, seen } = context
      source.watchFailures.push(goneError())
      source.current.push('BOOKMARK', bookmark('150'))
      source.current.end()
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual([...log].sort(), expectedDiff)
      assert.equal(informer.relists, 2)
      assert.deepEqual(source.watchCalls, ['100', '150', '200'], 'the 410 came from watch()')
      assert.deepEqual(seen.errors, [], 'a first 410 is not reported as an error')
      assert.deepEqual(seen.lifecycle, ['relist initial', 'relist gone'])
      await informer.stop()
    })

    it('relists at once on a first 410 but backs off when 410s repeat with no event between', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      source.watchFailures.push(goneError(), goneError(), goneError())
      informer.start()
      await until(() => seen.delays.length === 1, 'the second 410 backs off')
      assert.equal(informer.relists, 2, 'the first 410 relisted at once')
      assert.deepEqual(seen.delays, [100])
      assert.ok(seen.errors[0] instanceof GoneError)
      clock.advance(100)
      await until(() => seen.delays.length === 2, 'the third 410 backs off longer')
      assert.deepEqual(seen.delays, [100, 200])
      assert.equal(informer.relists, 3)
      clock.advance(200)
      await until(() => source.watches.length === 1, 'a watch finally opens')
      assert.equal(informer.relists, 4)
      await informer.stop()
    })

    it('relists at once on a 410 that follows another kind of failure (an API server restart)', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      source.watchFailures.push(goneError(), new Error('connection reset'), goneError())
      informer.start()
      await until(() => seen.delays.length === 1, 'the dropped connection backs off')
      assert.equal(informer.relists, 2, 'the first 410 relisted at once')
      clock.advance(seen.delays[0] ?? 0)
      await until(() => source.watches.length === 1, 'a watch opens after the second 410')
      assert.equal(informer.relists, 3, 'the second 410 relisted at once too')
      assert.equal(seen.delays.length, 1, 'no 410 backoff: the 410s were not in a row')
      await informer.stop()
    })

    it('restarts the list from the first page when a continue token expires', async () => {
      const context = setup({ pageSize: 2 })
      const { source, informer, log, seen } = context
      source.objects = ['a', 'b', 'c', 'd', 'e'].map((name) => pod(name, '3'))
      source.listFailures.push(undefined, goneError())
      await startAndWatch(context)
      assert.deepEqual(source.listCalls, [undefined, '2', undefined, '2', '4'])
      assert.equal(log.length, 5, 'each object is added once')
      assert.equal(new Set(log).size, 5)
      assert.equal(informer.store.size, 5)
      assert.equal(informer.relists, 1)
      assert.deepEqual(seen.errors, [])
      await informer.stop()
    })

    it('backs off instead of spinning when continue tokens keep expiring', async () => {
      const context = setup({ pageSize: 1 })
      const { clock, source, informer, seen } = context
      source.objects = [pod('a', '1'), pod('b', '1')]
      for (let i = 0; i < 10; i++) source.listFailures.push(undefined, goneError())
      informer.start()
      await until(() => seen.delays.length === 1, 'the list gives up and backs off')
      assert.ok(seen.errors[0] instanceof GoneError)
      assert.equal(informer.hasSynced(), false)
      assert.ok(source.listCalls.length < 20, 'stopped restarting')
      for (let round = 1; !informer.hasSynced(); round++) {
        clock.advance(seen.delays.at(-1) ?? 0)
        await until(
          () => informer.hasSynced() || seen.delays.length > round,
          'the list succeeds or backs off again'
        )
      }
      assert.deepEqual(sortedKeys(informer.store.list()), ['default/a', 'default/b'])
      await informer.stop()
    })

    it('backs off when the first page of a list answers 410', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      source.listFailures.push(goneError())
      informer.start()
      await until(() => seen.delays.length === 1, 'the list backs off')
      assert.equal(source.listCalls.length, 1)
      clock.advance(100)
      await until(() => informer.hasSynced(), 'the list succeeds')
      await informer.stop()
    })
  })

  describe('retries', () => {
    it('retries a failing watch with growing delays and resets the backoff after an event', async () => {
      const context = setup()
      const { clock, source, informer, log, seen } = context
      const failure = new Error('connect ECONNREFUSED')
      source.watchFailures.push(failure, failure, failure)
      informer.start()
      await until(() => seen.delays.length === 1, 'the first failure')
      clock.advance(99)
      await settleMany()
      assert.equal(source.watchCalls.length, 1, 'waits the whole delay')
      clock.advance(1)
      await until(() => seen.delays.length === 2, 'the second failure')
      clock.advance(200)
      await until(() => seen.delays.length === 3, 'the third failure')
      assert.deepEqual(seen.delays, [100, 200, 400])
      assert.deepEqual(seen.errors, [failure, failure, failure])
      clock.advance(400)
      await until(() => source.watches.length === 1, 'a watch opens')
      source.current.push('ADDED', pod('a', '101'))
      source.current.fail(new Error('socket hang up'))
      await until(() => seen.delays.length === 4, 'the stream fails')
      assert.deepEqual(seen.delays, [100, 200, 400, 100], 'an event reset the backoff')
      assert.deepEqual(log, ['add default/a@101'])
      clock.advance(100)
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.equal(source.watchCalls.at(-1), '101', 're-watches from the last event')
      assert.equal(informer.relists, 1, 'a plain error does not relist')
      assert.equal(informer.watchRestarts, 4)
      assert.deepEqual(seen.lifecycle.slice(1), [
        'restart error',
        'restart error',
        'restart error',
        'restart error',
      ])
      await informer.stop()
    })

    it('keeps retrying through many failures, never beyond maxMs, and then syncs', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      source.objects = [pod('a', '1')]
      for (let i = 0; i < 40; i++) source.listFailures.push(new Error(`list failure ${i}`))
      for (let i = 0; i < 40; i++) source.watchFailures.push(new Error(`watch failure ${i}`))
      informer.start()
      for (let i = 0; i < 80; i++) {
        await until(() => seen.delays.length === i + 1, `failure ${i + 1}`)
        clock.advance(seen.delays[i] ?? 0)
      }
      await until(() => source.watches.length === 1, 'a watch finally opens')
      assert.equal(informer.hasSynced(), true)
      assert.deepEqual(seen.delays.slice(0, 6), [100, 200, 400, 800, 1600, 1600])
      assert.ok(seen.delays.every((delay) => delay <= 1600))
      assert.equal(informer.relists, 1)
      assert.deepEqual(sortedKeys(informer.store.list()), ['default/a'])
      await informer.stop()
    })

    it('retries an in-stream ERROR other than 410 from the same resourceVersion, without relisting', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      await startAndWatch(context)
      source.current.push('BOOKMARK', bookmark('120'))
      source.current.push('ERROR', statusObject(500, 'etcd leader changed'))
      await until(() => seen.errors.length === 1, 'the error is reported')
      const error = seen.errors[0]
      assert.ok(error instanceof WatchStatusError)
      assert.equal(error.code, 500)
      assert.match(error.message, /etcd leader changed/)
      clock.advance(seen.delays[0] ?? 0)
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual(source.watchCalls, ['100', '120'])
      assert.equal(informer.relists, 1)
      await informer.stop()
    })

    it('backs off when a watch closes without delivering anything, instead of spinning', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      // Only the first few streams close at once, so a spinning loop still ends.
      source.onWatch = (watch, index) => {
        if (index < 5) watch.end()
      }
      informer.start()
      await until(() => source.watches.length >= 1, 'a watch opens')
      await settleMany()
      assert.equal(source.watches.length, 1, 'no re-watch before the backoff')
      assert.deepEqual(seen.lifecycle, ['relist initial', 'restart closed'])
      assert.equal(clock.nextDueInMs(), 100)
      clock.advance(100)
      await until(() => informer.watchRestarts === 2, 'the second stream closes')
      assert.equal(clock.nextDueInMs(), 200, 'the next empty close waits longer')
      assert.equal(informer.watchRestarts, 2)
      assert.deepEqual(source.watchCalls, ['100', '100'])
      await informer.stop()
    })

    it('validates its backoff options when constructed', () => {
      assert.throws(
        () => new Informer(new FakeListWatcher(), { backoff: { baseMs: 10, maxMs: 1 } }),
        RangeError
      )
    })
  })

  describe('idle watchdog', () => {
    it('restarts a watch that delivers nothing for idleTimeoutMs and counts the restart', async () => {
      const context = setup({ idleTimeoutMs: 1000 })
      const { clock, source, informer, seen } = context
      await startAndWatch(context)
      clock.advance(999)
      await settleMany()
      assert.equal(source.watches.length, 1)
      source.current.push('BOOKMARK', bookmark('130'))
      await settleMany()
      clock.advance(999)
      await settleMany()
      assert.equal(source.watches.length, 1, 'each event re-arms the watchdog')
      assert.equal(informer.watchRestarts, 0)
      clock.advance(1)
      await until(() => source.watches.length === 2, 'the idle watch is replaced')
      assert.equal(source.watches[0]?.aborted, true, 'the idle stream is aborted')
      assert.deepEqual(source.watchCalls, ['100', '130'])
      assert.equal(informer.watchRestarts, 1)
      assert.deepEqual(seen.lifecycle, ['relist initial', 'restart idle'])
      assert.deepEqual(seen.errors, [])
      assert.equal(informer.relists, 1)
      await informer.stop()
    })

    it('restarts a watch whose opening hangs', async () => {
      const context = setup({ idleTimeoutMs: 1000 })
      const { clock, source, informer } = context
      source.watchGate = new Gate()
      informer.start()
      await until(() => source.watchCalls.length === 1, 'a watch is requested')
      clock.advance(1000)
      await until(() => source.watchCalls.length === 2, 'the watch is requested again')
      assert.equal(informer.watchRestarts, 1)
      await informer.stop()
    })

    it('restarts a half-open watch that ignores its abort signal', async () => {
      const context = setup({ idleTimeoutMs: 1000 })
      const { clock, source, informer, log } = context
      source.watchRespectsAbort = false
      await startAndWatch(context)
      clock.advance(1000)
      await until(() => source.watches.length === 2, 'the stuck watch is replaced')
      assert.equal(informer.watchRestarts, 1)
      source.watches[0]?.push('ADDED', pod('stale', '1'))
      source.current.push('ADDED', pod('fresh', '101'))
      await until(() => log.length === 1, 'the new stream is read')
      await settleMany()
      assert.deepEqual(log, ['add default/fresh@101'], 'the abandoned stream is not read')
      await informer.stop()
    })
  })

  describe('handlers', () => {
    it('reports a throwing handler to onHandlerError and still delivers later events', async () => {
      const context = setup()
      const { source, informer, log, seen } = context
      source.objects = [pod('a', '1')]
      let badCalls = 0
      const boom = new Error('handler bug')
      informer.subscribe({
        onAdd: () => {
          badCalls++
          throw boom
        },
        onUpdate: () => {
          badCalls++
          throw boom
        },
      })
      await startAndWatch(context)
      source.current.push('ADDED', pod('b', '101'))
      source.current.push('MODIFIED', pod('b', '102'))
      await until(() => log.length === 3, 'every event reaches the good handler')
      assert.deepEqual(log, ['add default/a@1', 'add default/b@101', 'update default/b@101->102'])
      assert.equal(badCalls, 3, 'the throwing handler keeps being called')
      assert.deepEqual(seen.handlerErrors, [boom, boom, boom])
      assert.deepEqual(seen.errors, [], 'a handler error is not a watch error')
      assert.equal(source.watches.length, 1, 'the watch was not restarted')
      await informer.stop()
    })

    it('gives a late subscriber onAdd for every cached object at once, then live events', async () => {
      const context = setup()
      const { source, informer } = context
      source.objects = [pod('a', '1'), pod('b', '1')]
      await startAndWatch(context)
      const late = record(informer)
      assert.deepEqual(late, ['add default/a@1', 'add default/b@1'], 'synchronously on subscribe')
      source.current.push('ADDED', pod('c', '101'))
      await until(() => late.length === 3, 'the live event arrives')
      assert.equal(late[2], 'add default/c@101')
      await informer.stop()
    })

    it('gives a subscriber before sync only the list adds, never duplicates', async () => {
      const context = setup()
      const { source, informer, log } = context
      source.objects = [pod('a', '1')]
      await startAndWatch(context)
      assert.deepEqual(log, ['add default/a@1'])
      await informer.stop()
    })

    it('stops delivering to a handler after it unsubscribes', async () => {
      const context = setup()
      const { source, informer, log } = context
      await startAndWatch(context)
      const mine: string[] = []
      const unsubscribe = informer.subscribe({ onAdd: (object) => mine.push(objectKey(object)) })
      source.current.push('ADDED', pod('a', '101'))
      await until(() => mine.length === 1, 'the first event arrives')
      unsubscribe()
      source.current.push('ADDED', pod('b', '102'))
      await until(() => log.length === 2, 'the second event arrives elsewhere')
      assert.deepEqual(mine, ['default/a'])
      await informer.stop()
    })

    it('does not deliver the current event twice to a handler that subscribes while it is emitted', async () => {
      const context = setup()
      const { source, informer } = context
      await startAndWatch(context)
      const inner: string[] = []
      let subscribed = false
      informer.subscribe({
        onAdd: () => {
          if (subscribed) return
          subscribed = true
          informer.subscribe({ onAdd: (object) => inner.push(objectKey(object)) })
        },
      })
      source.current.push('ADDED', pod('a', '101'))
      await until(() => subscribed, 'the event is handled')
      await settleMany()
      assert.deepEqual(inner, ['default/a'])
      await informer.stop()
    })

    it('keeps running when the observer itself throws', async () => {
      const clock = new FakeClock()
      const source = new FakeListWatcher()
      const fail = (): never => {
        throw new Error('observer bug')
      }
      const informer = new Informer(source, {
        clock,
        random: () => 0,
        backoff: testBackoff,
        observer: { onRelist: fail, onWatchRestart: fail, onError: fail, onHandlerError: fail },
      })
      informer.subscribe({ onAdd: fail })
      const log = record(informer)
      source.objects = [pod('a', '1')]
      source.watchFailures.push(new Error('boom'))
      informer.start()
      await until(() => source.watchCalls.length === 1, 'the first watch fails')
      clock.advance(100)
      await until(() => source.watches.length === 1, 'the watch is retried')
      source.current.push('ADDED', pod('b', '101'))
      await until(() => log.length === 2, 'events still arrive')
      assert.deepEqual(log, ['add default/a@1', 'add default/b@101'])
      await informer.stop()
    })
  })

  describe('stop and start', () => {
    it('stops while sleeping in backoff, cancelling the timer', async () => {
      const context = setup()
      const { clock, source, informer, seen } = context
      source.watchFailures.push(new Error('down'))
      informer.start()
      await until(() => seen.delays.length === 1, 'the watch fails')
      assert.equal(clock.pendingTimers(), 1)
      await informer.stop()
      assert.equal(clock.pendingTimers(), 0)
      clock.advance(60_000)
      await settleMany()
      assert.equal(source.watchCalls.length, 1, 'nothing runs after stop')
    })

    it('stops while a watch hangs, closing the stream and leaving no timer', async () => {
      const context = setup()
      const { clock, source, informer, log } = context
      await startAndWatch(context)
      const watch = source.current
      await informer.stop()
      assert.equal(watch.aborted, true)
      assert.equal(watch.returned, true)
      assert.equal(clock.pendingTimers(), 0, 'the idle watchdog is cancelled')
      watch.push('ADDED', pod('late', '1'))
      await settleMany()
      assert.deepEqual(log, [], 'nothing is delivered after stop')
      assert.equal(source.watches.length, 1)
    })

    it('stops while a watch that ignores its abort signal hangs', async () => {
      const context = setup()
      const { source, informer } = context
      source.watchRespectsAbort = false
      await startAndWatch(context)
      await informer.stop()
      assert.equal(source.current.aborted, true)
    })

    it('stops while opening a watch hangs', async () => {
      const context = setup()
      const { source, informer } = context
      source.watchGate = new Gate()
      informer.start()
      await until(() => source.watchCalls.length === 1, 'a watch is requested')
      await informer.stop()
      assert.equal(source.watches.length, 0)
    })

    it('stops while a list that ignores its abort signal hangs', async () => {
      const context = setup()
      const { source, informer } = context
      source.listGate = new Gate()
      informer.start()
      await until(() => source.listCalls.length === 1, 'the list is requested')
      await informer.stop()
      assert.equal(informer.hasSynced(), false)
    })

    it('opens no watch when stopped while the list was in flight', async () => {
      const context = setup()
      const { source, informer } = context
      const gate = new Gate()
      source.listGate = gate
      informer.start()
      await until(() => source.listCalls.length === 1, 'the list is requested')
      let stopped = false
      const stopping = informer.stop().then(() => {
        stopped = true
      })
      gate.open()
      await until(() => stopped, 'stop resolves')
      await stopping
      await settleMany()
      assert.deepEqual(source.watchCalls, [])
    })

    it('relists with a diff against the kept cache when started again after stop', async () => {
      const context = setup()
      const { source, informer, log } = context
      source.objects = [pod('a', '1'), pod('b', '1')]
      await startAndWatch(context)
      await informer.stop()
      assert.equal(informer.store.size, 2, 'the cache keeps its last state')
      log.length = 0
      source.objects = [pod('a', '2')]
      informer.start()
      await until(() => source.watches.length === 2, 'the watch reopens')
      assert.deepEqual([...log].sort(), ['delete default/b@1', 'update default/a@1->2'])
      assert.equal(informer.relists, 2)
      await informer.stop()
    })

    it('runs a fresh loop when started while a stop is still in progress', async () => {
      const context = setup()
      const { source, informer } = context
      await startAndWatch(context)
      const stopping = informer.stop()
      informer.start()
      await stopping
      await until(() => source.watches.length === 2, 'the new loop watches')
      const [first, second] = source.watches
      assert.equal(first?.aborted, true)
      assert.equal(second?.aborted, false, 'the new loop watches on')
      await informer.stop()
      assert.equal(source.current.aborted, true)
    })

    it('does nothing when started twice', async () => {
      const context = setup()
      const { source, informer } = context
      await startAndWatch(context)
      informer.start()
      await settleMany()
      assert.equal(source.listCalls.length, 1)
      assert.equal(source.watches.length, 1)
      await informer.stop()
      await informer.stop()
    })
  })

  describe('status', () => {
    it('reports the age of the last list or watch event, bookmarks included', async () => {
      const context = setup()
      const { clock, source, informer } = context
      assert.equal(informer.lastEventAgeMs(), undefined)
      assert.equal(informer.description, 'pods.v1 (fake)')
      clock.advance(10)
      await startAndWatch(context)
      assert.equal(informer.lastEventAgeMs(), 0)
      clock.advance(500)
      assert.equal(informer.lastEventAgeMs(), 500)
      source.current.push('BOOKMARK', bookmark('101'))
      await settleMany()
      assert.equal(informer.lastEventAgeMs(), 0)
      await informer.stop()
    })

    it('asks for a server-side timeout within watchTimeoutSeconds', async () => {
      const context = setup({ random: () => 0.5, watchTimeoutSeconds: { min: 100, max: 200 } })
      await startAndWatch(context)
      assert.equal(context.source.current.options.timeoutSeconds, 150)
      await context.informer.stop()
    })
  })

  describe('indexes', () => {
    it('keeps namespace and controller-owner lookups right through owner changes and deletes', async () => {
      const context = setup()
      const { source, informer } = context
      const { store } = informer
      source.objects = [
        pod('p1', '1', { namespace: 'a', owner: 'u1' }),
        pod('p2', '1', { namespace: 'a', owner: 'u2' }),
        pod('p3', '1', { namespace: 'b', owner: 'u1' }),
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', resourceVersion: '1' } },
      ]
      await startAndWatch(context)
      assert.deepEqual(sortedKeys(store.listByNamespace('a')), ['a/p1', 'a/p2'])
      assert.deepEqual(sortedKeys(store.listByNamespace('b')), ['b/p3'])
      assert.deepEqual(sortedKeys(store.listByControllerUid('u1')), ['a/p1', 'b/p3'])
      assert.deepEqual(sortedKeys(store.listByControllerUid('u2')), ['a/p2'])
      assert.equal(store.get('n1')?.kind, 'Node')

      source.current.push('MODIFIED', pod('p1', '101', { namespace: 'a', owner: 'u2' }))
      source.current.push(
        'MODIFIED',
        pod('p3', '102', { namespace: 'b', owner: 'u1', controller: false })
      )
      source.current.push('DELETED', pod('p2', '103', { namespace: 'a', owner: 'u2' }))
      source.current.push('ADDED', pod('p4', '104', { namespace: 'b', owner: 'u3' }))
      await until(() => store.get('b/p4') !== undefined, 'the events are applied')
      assert.deepEqual(sortedKeys(store.listByNamespace('a')), ['a/p1'])
      assert.deepEqual(sortedKeys(store.listByNamespace('b')), ['b/p3', 'b/p4'])
      assert.deepEqual(store.listByControllerUid('u1'), [], 'a non-controller owner is not indexed')
      assert.deepEqual(sortedKeys(store.listByControllerUid('u2')), ['a/p1'])
      assert.deepEqual(sortedKeys(store.listByControllerUid('u3')), ['b/p4'])

      source.objects = [
        pod('p3', '110', { namespace: 'b', owner: 'u1' }),
        pod('p4', '104', { namespace: 'b', owner: 'u3' }),
      ]
      source.current.push('ERROR', statusObject(410, 'expired'))
      await until(() => informer.relists === 2, 'the relist is applied')
      assert.deepEqual(store.listByNamespace('a'), [])
      assert.deepEqual(store.listByControllerUid('u2'), [], 'a vanished object leaves the index')
      assert.deepEqual(sortedKeys(store.listByControllerUid('u1')), ['b/p3'])
      assert.deepEqual(sortedKeys(store.listByNamespace('b')), ['b/p3', 'b/p4'])
      assert.equal(store.get('n1'), undefined)
      assert.equal(store.size, 2)
      await informer.stop()
    })
  })
})
