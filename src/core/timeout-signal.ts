/**
 * The longest delay a Node timer honours (about 24.8 days): `setTimeout` fires a longer one after
 * 1 ms, so every delay read from user input is capped to it.
 */
export const MAX_TIMER_DELAY_MS: number = 2 ** 31 - 1

/** A signal that aborts on a deadline or with its parents, and the call that lets go of it. */
export interface TimeoutSignal {
  /** Aborted when the deadline passes (a `TimeoutError`) or when any parent aborts (its reason). */
  readonly signal: AbortSignal
  /** Clears the timer and the parents' listeners; call it as soon as the guarded work ends. */
  readonly release: () => void
}

/**
 * Builds a signal that aborts after `timeoutMs` (0 or less: never; more than
 * {@link MAX_TIMER_DELAY_MS}: after that) or when any of `parents` aborts, released explicitly
 * when the work it guards ends.
 *
 * @remarks
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` does the same but cannot be released: its
 * timer, the combined signal and the weak references behind it live until the timer fires. Once
 * per reconcile, API request and hook call, that kept 25,603 timers and about 16 MiB of heap
 * alive at 10,000 parents (docs/performance.md), all for work long finished. The timer is
 * unreferenced, as `AbortSignal.timeout`'s is, so it never keeps the process alive.
 */
export function timeoutSignal(
  timeoutMs: number,
  parents: readonly (AbortSignal | undefined)[] = []
): TimeoutSignal {
  const controller = new AbortController()
  const linked = parents.filter((p): p is AbortSignal => p !== undefined)
  const listeners: { parent: AbortSignal; onAbort: () => void }[] = []
  for (const parent of linked) {
    if (parent.aborted) {
      controller.abort(parent.reason)
      break
    }
    const onAbort = (): void => {
      controller.abort(parent.reason)
    }
    parent.addEventListener('abort', onAbort, { once: true })
    listeners.push({ parent, onAbort })
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  if (timeoutMs > 0 && !controller.signal.aborted) {
    timer = setTimeout(
      () => {
        controller.abort(
          new DOMException('The operation was aborted due to timeout', 'TimeoutError')
        )
      },
      Math.min(timeoutMs, MAX_TIMER_DELAY_MS)
    )
    timer.unref()
  }
  return {
    signal: controller.signal,
    release: () => {
      if (timer !== undefined) clearTimeout(timer)
      for (const { parent, onAbort } of listeners) parent.removeEventListener('abort', onAbort)
    },
  }
}
