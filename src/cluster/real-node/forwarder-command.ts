/**
 * The command line that runs a stream forwarder as a process of its own: this Node binary, the
 * flags it runs with (tsx's loader when run from source) and the forwarder's entry file.
 *
 * @module
 */
import { fileURLToPath } from 'node:url'

/** A command and its arguments. */
export interface CommandLine {
  readonly command: string
  readonly args: string[]
}

/** Returns the command line of a Node entry file next to this one (`name` without extension). */
export function siblingNodeCommand(name: string, args: readonly string[]): CommandLine {
  // From source (tsx) this file is .ts, from dist .js; the sibling has the same extension.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
  const entry = fileURLToPath(new URL(`./${name}${extension}`, import.meta.url))
  return { command: process.execPath, args: [...loaderFlags(process.execArgv), entry, ...args] }
}

/**
 * Keeps the module-loading flags of `execArgv` (`--import tsx`), dropping the rest: a test
 * runner's flags (`--test`, reporters) must not turn the child into a test run.
 */
export function loaderFlags(execArgv: readonly string[]): string[] {
  const kept: string[] = []
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] ?? ''
    if (flag === '--import' || flag === '--require' || flag === '--loader') {
      kept.push(flag, execArgv[i + 1] ?? '')
      i++
    } else if (/^--(import|require|loader)=/.test(flag)) kept.push(flag)
  }
  return kept
}

/** The command line of a forwarder from `from` to `to` (see stream-forwarder.ts). */
export function forwarderCommand(from: string, to: string): CommandLine {
  return siblingNodeCommand('stream-forwarder-process', [from, to])
}
