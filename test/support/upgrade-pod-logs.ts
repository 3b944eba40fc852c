// Follows the logs of engine Pods from the host (`kubectl logs -f`), from the Pod's start to its
// container's exit, so the lines of a Pod an upgrade deletes are kept: the sharded upgrade test
// reads each replica's ring agreements ("serving a ring") from them.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

/** One JSON log line of the engine. */
export type LogLine = Readonly<Record<string, unknown>>

/** The time of a log line (ms): `ts` (seconds) or `time`. */
export function logTimeMs(line: LogLine): number {
  const ts = line['ts']
  if (typeof ts === 'number') return ts * 1000
  return Date.parse(String(ts ?? line['time']))
}

/** Follows Pods' logs, one `kubectl logs -f` each, started once per Pod. */
export class PodLogs {
  readonly lines = new Map<string, LogLine[]>()
  readonly #kubeconfig: string
  readonly #namespace: string
  readonly #followers = new Map<string, ChildProcess>()

  constructor(kubeconfig: string, namespace: string) {
    this.#kubeconfig = kubeconfig
    this.#namespace = namespace
  }

  /**
   * Follows `pod` unless already followed. Call once its container runs: `kubectl logs -f` of a
   * Pod still creating fails, and is then tried again at the next call.
   */
  follow(pod: string): void {
    if (this.#followers.has(pod)) return
    const child = spawn(
      'kubectl',
      ['--kubeconfig', this.#kubeconfig, '-n', this.#namespace, 'logs', '-f', pod],
      { stdio: ['ignore', 'pipe', 'ignore'] }
    )
    this.#followers.set(pod, child)
    const lines = this.lines.get(pod) ?? []
    this.lines.set(pod, lines)
    let got = false
    createInterface({ input: child.stdout }).on('line', (text) => {
      got = true
      try {
        lines.push(JSON.parse(text) as LogLine)
      } catch {
        // Not a JSON line (Node.js warnings): not the engine's log.
      }
    })
    child.on('close', () => {
      // Nothing read: the container had not started; a later call follows it again.
      if (!got) this.#followers.delete(pod)
    })
  }

  /** The times (ms) each Pod logged `msg`. */
  timesOf(msg: string): Map<string, number[]> {
    const times = new Map<string, number[]>()
    for (const [pod, lines] of this.lines) {
      times.set(pod, lines.filter((l) => l['msg'] === msg).map(logTimeMs))
    }
    return times
  }

  /** Stops every follower still running. */
  stop(): void {
    for (const child of this.#followers.values()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    }
  }
}
