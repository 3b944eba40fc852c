/**
 * Notices a blocked event loop, for a liveness probe. A loop blocked right now cannot answer a
 * probe at all (its timeout catches that), but a loop that stalls for many seconds again and
 * again answers between the stalls and would look alive; this watchdog remembers the stalls.
 *
 * @module
 */
import { systemClock } from '../clock/clock.js'
import type { Clock, TimerHandle } from '../clock/clock.js'

/** Options of {@link EventLoopWatchdog}. */
export interface EventLoopWatchdogOptions {
  /** A delay of the event loop longer than this counts as a stall. */
  readonly thresholdMs: number
  /** How long after a stall the watchdog still reports it ({@link EVENT_LOOP_STALL_WINDOW_MS}). */
  readonly windowMs?: number
  /** How often the loop is sampled (500 ms). */
  readonly intervalMs?: number
  readonly clock?: Clock
}

/**
 * How long a stall is reported (30 s): with the manifests' liveness probe (every 10 s, three
 * failures) a stall is seen by the probes that follow it, so the kubelet restarts an engine whose
 * loop stalled past the threshold rather than one whose probe was merely slow once.
 */
export const EVENT_LOOP_STALL_WINDOW_MS = 30_000

/** A stall: when it ended and how long the loop was late. */
interface Stall {
  readonly endedAt: number
  readonly delayMs: number
}

/**
 * Samples the event loop with a timer and measures how late each tick fires (timer drift): a
 * tick due in `intervalMs` that runs `intervalMs + d` later means the loop could not run for `d`.
 */
export class EventLoopWatchdog {
  readonly #clock: Clock
  readonly #thresholdMs: number
  readonly #windowMs: number
  readonly #intervalMs: number
  #lastTick = 0
  #stall: Stall | undefined
  #timer: TimerHandle | undefined

  constructor(options: EventLoopWatchdogOptions) {
    this.#clock = options.clock ?? systemClock
    this.#thresholdMs = options.thresholdMs
    this.#windowMs = options.windowMs ?? EVENT_LOOP_STALL_WINDOW_MS
    this.#intervalMs = options.intervalMs ?? 500
  }

  /** Starts sampling; call {@link EventLoopWatchdog.stop} when done (the timer keeps the process alive). */
  start(): void {
    if (this.#timer !== undefined) return
    this.#lastTick = this.#clock.now()
    this.#schedule()
  }

  /** Stops sampling. */
  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /**
   * Why the process is not alive: a stall longer than the threshold within the window, or one
   * in progress (a probe answered right after a stall may run before the late tick); empty when
   * the loop is healthy or the watchdog is not running.
   */
  unhealthy(): string[] {
    if (this.#timer === undefined) return []
    const now = this.#clock.now()
    const current = now - this.#lastTick - this.#intervalMs
    const threshold = `${formatSeconds(this.#thresholdMs)} threshold`
    if (current > this.#thresholdMs)
      return [`event loop blocked for ${formatSeconds(current)} (${threshold})`]
    const stall = this.#stall
    if (stall === undefined || now - stall.endedAt > this.#windowMs) return []
    return [
      `event loop blocked for ${formatSeconds(stall.delayMs)} ` +
        `${formatSeconds(now - stall.endedAt)} ago (${threshold})`,
    ]
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#tick()
    }, this.#intervalMs)
  }

  #tick(): void {
    const now = this.#clock.now()
    const delayMs = now - this.#lastTick - this.#intervalMs
    if (delayMs > this.#thresholdMs) this.#stall = { endedAt: now, delayMs }
    this.#lastTick = now
    this.#schedule()
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}
