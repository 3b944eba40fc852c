/**
 * Process supervision for a local control plane: the components it started, in start order,
 * each logging to `<logs>/<name>.log`, stopped in reverse order so no component loses its backend.
 *
 * @module
 */
import { join } from 'node:path'
import { ManagedProcess } from './managed-process.js'
import type { RecordedProcess } from './control-plane-state.js'

/** How a component is launched when not directly (e.g. inside a mount namespace of its own). */
export interface ComponentLaunch {
  readonly command: string
  readonly args: string[]
}

/** The running components of one control plane. */
export class ComponentProcesses {
  readonly #logsDir: string
  readonly #background: boolean
  #processes: ManagedProcess[] = []

  /** @param background - leave the processes running after this Node process exits. */
  constructor(logsDir: string, background: boolean) {
    this.#logsDir = logsDir
    this.#background = background
  }

  /** Starts component `name` and keeps it for {@link ComponentProcesses.stopAll}. */
  spawn(
    name: string,
    command: string,
    args: string[],
    env?: Readonly<Record<string, string>>,
    launch?: ComponentLaunch
  ): ManagedProcess {
    const proc = ManagedProcess.start(
      {
        name,
        command,
        args,
        logFile: join(this.#logsDir, `${name}.log`),
        ...(env === undefined ? {} : { env }),
        ...(launch === undefined ? {} : { launch }),
      },
      this.#background
    )
    this.#processes.push(proc)
    return proc
  }

  /** Stops component `name` and forgets it, so it can be spawned again. */
  async stopOne(name: string): Promise<void> {
    const index = this.#processes.findIndex((p) => p.spec.name === name)
    const old = this.#processes[index]
    if (old === undefined) throw new Error(`${name} is not running`)
    await old.stop()
    this.#processes.splice(index, 1)
  }

  /** Stops every component, the last started first, and forgets them. */
  async stopAll(): Promise<void> {
    // Reverse order: the controller manager first, etcd last, so no component loses its backend.
    for (const proc of [...this.#processes].reverse()) await proc.stop()
    this.#processes = []
  }

  /** Kills every component at once (synchronous: for process exit). */
  killNow(): void {
    for (const proc of this.#processes) proc.killNow()
  }

  /** The components as the state file records them. */
  records(): RecordedProcess[] {
    return this.#processes.map((p) => ({ name: p.spec.name, pid: p.pid, command: p.spec.command }))
  }
}
