/**
 * The engine's log as `metactl dev` shows it: with `--verbose`, every line the engine writes
 * (info and up, zap's console layout) on stderr; without, only its warnings and errors, each as
 * one short line through the sync reporter (so repeats collapse), and not the `sync failed` lines
 * that the sync's own line already tells.
 *
 * @module
 */
import { createLogger } from '../../runtime/diagnostics/logger.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { CliIo } from '../cli-io.js'
import type { SyncReporter } from './sync-report.js'

/** Fields worth a place on the short line, in this order. */
const SHOWN_FIELDS = ['resource', 'groupVersion', 'controller', 'parent', 'error', 'hint']

/** One short line for a JSON log line; undefined for lines the sync lines already tell. */
export function shortEngineLine(json: string): string | undefined {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(json) as Record<string, unknown>
  } catch {
    return `engine: ${json}`
  }
  const message = String(entry['msg'])
  if (message === 'sync failed') return undefined
  const fields = SHOWN_FIELDS.filter((key) => entry[key] !== undefined).map((key) => {
    const value = entry[key]
    return `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`
  })
  const level = String(entry['level'])
  return `engine ${level}: ${message}${fields.length === 0 ? '' : ` (${fields.join(', ')})`}`
}

/** The logger the dev session gives its engine. */
export function devLogger(verbose: boolean, io: CliIo, reporter: SyncReporter): Logger {
  if (verbose) {
    return createLogger({
      level: 'info',
      format: 'text',
      write: (line) => {
        io.err(line)
      },
    })
  }
  return createLogger({
    level: 'warn',
    format: 'json',
    caller: false,
    stacktraceLevel: 'panic',
    write: (line) => {
      const short = shortEngineLine(line)
      if (short !== undefined) reporter.print(`engine ${short}`, [short])
    },
  })
}
