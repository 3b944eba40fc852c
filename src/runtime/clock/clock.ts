import { MAX_TIMER_DELAY_MS } from '../../core/timeout-signal.js'

declare const timerHandleBrand: unique symbol

/**
 * Identifies a timer scheduled with {@link Clock.setTimeout}, so that it can be cancelled.
 *
 * @remarks
 * Opaque on purpose: a handle only means something to the clock that issued it, and the brand
 * keeps a Node `Timeout` or a number from being passed where a handle is expected.
 */
export interface TimerHandle {
  readonly [timerHandleBrand]: true
}

/**
 * Tells the time and schedules callbacks, in milliseconds.
 *
 * @remarks
 * Everything in the runtime that waits (the work queue's delayed adds, back-off, rate limiting)
 * goes through an injected clock, so that tests drive time with a {@link FakeClock} instead of
 * sleeping, and a test of a 1000 s back-off runs in microseconds.
 */
export interface Clock {
  /**
   * Returns the current time in milliseconds.
   *
   * Only differences between two readings are meaningful to the runtime; {@link systemClock}
   * returns milliseconds since the Unix epoch that never go backwards within the process.
   */
  now(): number
  /** Runs `fn` once, `ms` milliseconds from now (at once for `ms <= 0`, never for `Infinity`). */
  setTimeout(fn: () => void, ms: number): TimerHandle
  /** Cancels a timer that has not fired yet; cancelling a fired or cancelled timer does nothing. */
  clearTimeout(handle: TimerHandle): void
}

/** A system timer that re-arms itself until a delay longer than Node's limit has passed. */
interface SystemTimer {
  timeout: NodeJS.Timeout | undefined
}

/**
 * Reads the process's monotonic clock and schedules with Node's timers.
 *
 * @remarks
 * `now()` is `performance.timeOrigin + performance.now()`: epoch milliseconds, like `Date.now()`,
 * but immune to wall-clock steps (NTP, a suspended VM), which would otherwise stall a token
 * bucket or fire back-offs early. Timers keep the process alive, as Go's do: a pending delayed
 * add is work the program has promised to do; owners cancel them on shutdown.
 */
export const systemClock: Clock = {
  now(): number {
    return performance.timeOrigin + performance.now()
  },
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: SystemTimer = { timeout: undefined }
    if (ms === Infinity) return timer as unknown as TimerHandle
    const due = systemClock.now() + ms
    const arm = (delay: number): void => {
      if (delay > MAX_TIMER_DELAY_MS) {
        // Only delays beyond the limit are re-armed, so ordinary timers keep Node's precision.
        timer.timeout = globalThis.setTimeout(() => {
          arm(due - systemClock.now())
        }, MAX_TIMER_DELAY_MS)
        return
      }
      timer.timeout = globalThis.setTimeout(
        () => {
          timer.timeout = undefined
          fn()
        },
        Math.max(delay, 0)
      )
    }
    arm(ms)
    return timer as unknown as TimerHandle
  },
  clearTimeout(handle: TimerHandle): void {
    const timer = handle as unknown as SystemTimer
    if (timer.timeout !== undefined) globalThis.clearTimeout(timer.timeout)
    timer.timeout = undefined
  },
}
