/**
 * A small structured logger: one JSON object per line (or readable text), with levels and
 * child loggers that carry fields such as `controller` and `parent`.
 *
 * @module
 */

/** Log levels, least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Output format: JSON lines for machines, text for people. */
export type LogFormat = 'json' | 'text'

const SEVERITY: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** Fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>

/** Writes structured log lines. */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
  /** Returns a logger that adds `fields` to every line. */
  child(fields: LogFields): Logger
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  readonly level?: LogLevel
  readonly format?: LogFormat
  /** Receives each finished line, without the newline (stderr by default). */
  readonly write?: (line: string) => void
  readonly now?: () => Date
  /** Renders the `time` of a line (ISO 8601 in UTC with milliseconds by default). */
  readonly time?: (date: Date) => string | number
}

/** An error as log fields: name and message, its stack only at debug level, and its cause. */
function render(value: unknown, withStack: boolean): unknown {
  if (value instanceof Error) {
    const cause = value.cause === undefined ? {} : { cause: render(value.cause, withStack) }
    const stack = withStack && value.stack !== undefined ? { stack: value.stack } : {}
    return { name: value.name, message: value.message, ...stack, ...cause }
  }
  return value
}

/** Creates a logger writing to stderr (or `options.write`). */
export function createLogger(options: LoggerOptions = {}, base: LogFields = {}): Logger {
  const threshold = SEVERITY[options.level ?? 'info']
  const format = options.format ?? 'json'
  const write =
    options.write ??
    ((line: string): void => {
      process.stderr.write(`${line}\n`)
    })
  const now = options.now ?? ((): Date => new Date())
  const time = options.time ?? ((date: Date): string => date.toISOString())
  const emit = (level: LogLevel, message: string, fields: LogFields = {}): void => {
    if (SEVERITY[level] < threshold) return
    const all: Record<string, unknown> = {}
    for (const [key, value] of Object.entries({ ...base, ...fields }))
      all[key] = render(value, threshold <= SEVERITY.debug)
    if (format === 'json') {
      write(JSON.stringify({ time: time(now()), level, msg: message, ...all }))
      return
    }
    const extras = Object.entries(all)
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ')
    write(
      `${String(time(now()))} ${level.toUpperCase().padEnd(5)} ${message}${extras ? ` ${extras}` : ''}`
    )
  }
  return {
    debug: (message, fields) => {
      emit('debug', message, fields)
    },
    info: (message, fields) => {
      emit('info', message, fields)
    },
    warn: (message, fields) => {
      emit('warn', message, fields)
    },
    error: (message, fields) => {
      emit('error', message, fields)
    },
    child: (fields) => createLogger(options, { ...base, ...fields }),
  }
}

/** A logger that drops everything, for tests and library defaults. */
export const silentLogger: Logger = createLogger({ write: () => undefined })
