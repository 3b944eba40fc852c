/**
 * Stops what this process started when it ends: on exit every registered resource is killed at
 * once (nothing asynchronous can run then); on SIGINT and SIGTERM each is stopped properly first.
 *
 * @module
 */

/** Something to clean up when the process ends. */
export interface ExitCleanup {
  /** Kills synchronously (on process exit). */
  killNow(): void
  /** Stops properly (on SIGINT or SIGTERM). */
  stop(): Promise<void>
}

const registered = new Set<ExitCleanup>()
let hooksInstalled = false

function installExitHooks(): void {
  if (hooksInstalled) return
  hooksInstalled = true
  process.once('exit', () => {
    for (const resource of registered) resource.killNow()
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void Promise.allSettled([...registered].map((resource) => resource.stop())).then(() => {
        process.exit(signal === 'SIGINT' ? 130 : 143)
      })
    })
  }
}

/** Registers `resource` to be cleaned up when the process ends. */
export function cleanUpOnExit(resource: ExitCleanup): void {
  installExitHooks()
  registered.add(resource)
}

/** Forgets `resource` (it was stopped or released). */
export function forgetOnExit(resource: ExitCleanup): void {
  registered.delete(resource)
}
