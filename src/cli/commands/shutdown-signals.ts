/**
 * When `metactl run` should stop: SIGTERM, SIGINT, or its parent process going away (so an engine
 * started by `npx metactl run &` does not outlive a killed npx, orphaned).
 *
 * @module
 */
import type { Logger } from '../../runtime/diagnostics/logger.js'

/** How often the parent process is checked (1 s). */
export const PARENT_CHECK_INTERVAL_MS = 1000

/** A shutdown request source. */
export interface Shutdown {
  /** Aborts at the first request. */
  readonly signal: AbortSignal
  /** Resolves with the first request's reason (`SIGTERM`, `SIGINT`, `parent exited`). */
  readonly done: Promise<string>
  /** Removes the handlers. */
  dispose(): void
}

/**
 * Listens for shutdown requests. A second SIGTERM or SIGINT while draining ends the process at
 * once with exit code 130, as an impatient Ctrl-C expects.
 */
export function watchShutdown(
  log: Logger,
  options: { readonly parentCheckMs?: number; readonly exit?: (code: number) => void } = {}
): Shutdown {
  const abort = new AbortController()
  let resolveDone: (reason: string) => void = () => undefined
  const done = new Promise<string>((resolve) => {
    resolveDone = resolve
  })
  const request = (reason: string): void => {
    if (abort.signal.aborted) return
    abort.abort(new Error(`shutdown requested: ${reason}`))
    resolveDone(reason)
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    if (abort.signal.aborted) {
      log.warn('second signal while draining: exiting now', { signal })
      ;(options.exit ?? ((code: number) => process.exit(code)))(130)
      return
    }
    request(signal)
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  // An orphan is re-parented (to init or a subreaper), which changes its ppid.
  const parent = process.ppid
  const timer =
    parent > 1
      ? setInterval(() => {
          if (process.ppid !== parent) request('parent exited')
        }, options.parentCheckMs ?? PARENT_CHECK_INTERVAL_MS)
      : undefined
  timer?.unref()
  return {
    signal: abort.signal,
    done,
    dispose: () => {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
      if (timer !== undefined) clearInterval(timer)
    },
  }
}
