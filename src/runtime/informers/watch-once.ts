/**
 * One watch of an informer: opens it, hands each event on, and tells how it ended. An idle
 * watchdog aborts a watch that delivers nothing for `idleTimeoutMs`, so a half-open connection
 * cannot freeze the cache, even when the {@link ListWatcher} ignores its abort signal.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { Clock, TimerHandle } from '../clock/clock.js'
import type { ListWatcher } from './list-watcher.js'
import { closeIterator, untilAborted } from './until-aborted.js'
import { watchStatusError } from './watch-status-error.js'
import type { WatchStatusError } from './watch-status-error.js'

/** How one watch ended, when it did not throw. */
export type WatchOutcome =
  /** The stream ended after delivering events: a normal server-side timeout. */
  | { readonly kind: 'ended' }
  /** The stream ended without delivering anything. */
  | { readonly kind: 'closed' }
  /** The idle watchdog fired. */
  | { readonly kind: 'idle' }
  /** The stream reported 410. */
  | { readonly kind: 'gone'; readonly error: WatchStatusError }

/** What one watch starts from and how long it may stay open or silent. */
export interface WatchOnceOptions {
  /** Where the watch starts; undefined: a streaming initial list (the source's `watchList`). */
  readonly resourceVersion: string | undefined
  readonly timeoutSeconds: number
  readonly idleTimeoutMs: number
  readonly clock: Clock
}

function openWatchList<T extends KubeObject>(
  source: ListWatcher<T>,
  options: { readonly timeoutSeconds: number; readonly signal: AbortSignal }
): Promise<AsyncIterable<WatchEvent>> {
  if (source.watchList === undefined) throw new Error(`${source.description} cannot stream lists`)
  return source.watchList(options)
}

/**
 * Watches `source` until the stream ends, goes idle or reports 410, calling `onEvent` for each
 * event but `ERROR` (`first` is true for the first one); any other in-stream `ERROR` is thrown
 * as a {@link WatchStatusError}. Aborting `outer` ends it with the signal's reason.
 */
export async function watchOnce<T extends KubeObject>(
  source: ListWatcher<T>,
  options: WatchOnceOptions,
  outer: AbortSignal,
  onEvent: (event: WatchEvent, first: boolean) => void
): Promise<WatchOutcome> {
  const { clock, resourceVersion, timeoutSeconds, idleTimeoutMs } = options
  const controller = new AbortController()
  const onOuterAbort = (): void => {
    controller.abort(outer.reason)
  }
  // A stop that came while the list was finishing must not let a watch open.
  if (outer.aborted) onOuterAbort()
  else outer.addEventListener('abort', onOuterAbort, { once: true })
  const idleReason = new Error('watch idle')
  let timer: TimerHandle | undefined
  // One timer per quiet spell, not one per event: when it fires early it waits out the rest.
  let lastActivityMs = clock.now()
  const checkIdle = (): void => {
    const quietMs = clock.now() - lastActivityMs
    if (quietMs >= idleTimeoutMs) controller.abort(idleReason)
    else timer = clock.setTimeout(checkIdle, idleTimeoutMs - quietMs)
  }
  let iterator: AsyncIterator<WatchEvent> | undefined
  let sawEvent = false
  try {
    timer = clock.setTimeout(checkIdle, idleTimeoutMs)
    const signal = controller.signal
    const events = await untilAborted(
      resourceVersion === undefined
        ? openWatchList(source, { timeoutSeconds, signal })
        : source.watch({ resourceVersion, timeoutSeconds, signal }),
      signal
    )
    iterator = events[Symbol.asyncIterator]()
    for (;;) {
      // Raced against the signal, so a stream that ignores its abort cannot hold the loop.
      const step = await untilAborted(iterator.next(), controller.signal)
      if (step.done === true) {
        iterator = undefined
        break
      }
      const event = step.value
      if (event.type === 'ERROR') {
        const error = watchStatusError(source.description, event.object)
        if (error.code === 410) return { kind: 'gone', error }
        throw error
      }
      lastActivityMs = clock.now()
      onEvent(event, !sawEvent)
      sawEvent = true
    }
    return { kind: sawEvent ? 'ended' : 'closed' }
  } catch (error) {
    if (controller.signal.reason === idleReason && !outer.aborted) return { kind: 'idle' }
    throw error
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer)
    outer.removeEventListener('abort', onOuterAbort)
    controller.abort(new Error('watch finished'))
    if (iterator !== undefined) closeIterator(iterator)
  }
}
