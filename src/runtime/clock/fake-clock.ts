import type { Clock, TimerHandle } from './clock.js'

/** A timer waiting on a {@link FakeClock}, ordered by due time and then by scheduling order. */
interface FakeTimer {
  readonly due: number
  readonly seq: number
  readonly fn: () => void
}

/**
 * Implements {@link Clock} with a time that moves only when a test calls {@link FakeClock.advance}.
 *
 * @remarks
 * Timers fire synchronously inside `advance`, in due order (ties in the order they were
 * scheduled), with `now()` reading each timer's due time while it runs, so code that reschedules
 * from a callback sees the same times it would see on a real clock. Promises resolved by a timer
 * settle only after `advance` returns; tests await a macrotask (`setImmediate`) to let them run.
 *
 * @example
 * ```ts
 * const clock = new FakeClock()
 * clock.setTimeout(() => console.log('fired at', clock.now()), 100)
 * clock.advance(100) // fired at 100
 * ```
 */
export class FakeClock implements Clock {
  #now: number
  #seq = 0
  /** Pending timers sorted by (due, seq); small enough in tests for a sorted array to beat a heap. */
  #timers: FakeTimer[] = []
  readonly #handles = new WeakMap<TimerHandle, FakeTimer>()

  /** Starts the clock at `startMs` (0). */
  constructor(startMs = 0) {
    this.#now = startMs
  }

  /** Returns the fake current time. */
  now(): number {
    return this.#now
  }

  /** Schedules `fn` to run when the clock has been advanced `ms` past the current time. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = Object.freeze({}) as TimerHandle
    if (ms === Infinity) return handle
    const timer: FakeTimer = { due: this.#now + (ms > 0 ? ms : 0), seq: this.#seq++, fn }
    this.#timers.splice(this.#insertionIndex(timer), 0, timer)
    this.#handles.set(handle, timer)
    return handle
  }

  /** Cancels a pending timer. */
  clearTimeout(handle: TimerHandle): void {
    const timer = this.#handles.get(handle)
    if (timer === undefined) return
    this.#handles.delete(handle)
    const index = this.#timers.indexOf(timer)
    if (index >= 0) this.#timers.splice(index, 1)
  }

  /**
   * Moves time forward by `ms` and runs every timer that falls due, including timers that those
   * callbacks schedule within the window.
   */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`cannot advance a clock by ${ms} ms`)
    const target = this.#now + ms
    for (;;) {
      const next = this.#timers[0]
      if (next === undefined || next.due > target) break
      this.#timers.shift()
      this.#now = next.due
      next.fn()
    }
    this.#now = target
  }

  /** Returns how many timers are waiting to fire. */
  pendingTimers(): number {
    return this.#timers.length
  }

  /** Returns how long until the next timer is due, or `undefined` when none is pending. */
  nextDueInMs(): number | undefined {
    const next = this.#timers[0]
    return next === undefined ? undefined : next.due - this.#now
  }

  #insertionIndex(timer: FakeTimer): number {
    // Upper bound on due time: a new timer goes after every timer due at the same time or earlier.
    let low = 0
    let high = this.#timers.length
    while (low < high) {
      const mid = (low + high) >>> 1
      const other = this.#timers[mid]
      if (other !== undefined && other.due <= timer.due) low = mid + 1
      else high = mid
    }
    return low
  }
}
