/**
 * A small structured logger that writes what upstream's zap logger (controller-runtime's
 * production settings) writes: one JSON object per line with `level`, `ts`, `logger`, `caller`,
 * `msg`, the fields, and `stacktrace` at or above a level; or zap's console layout. Levels are
 * zap's, including logr's graded verbosity: `V(n)` is level `-n`, shown as `debug` for 1 and
 * `Level(-n)` above.
 *
 * @module
 */

/** Named log levels, least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Output format: JSON lines for machines, zap's console layout for people. */
export type LogFormat = 'json' | 'text'

/** zap's numbers for the named levels; `V(n)` is `-n`. */
const SEVERITY: Readonly<Record<LogLevel | 'panic', number>> = {
  debug: -1,
  info: 0,
  warn: 1,
  error: 2,
  panic: 4,
}

/** Fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>

/** Writes structured log lines. */
export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
  /** Logs at verbosity `level` (logr's `V(level).Info`): 1 is debug, higher is more detail. */
  v(level: number, message: string, fields?: LogFields): void
  /** Whether lines at verbosity `level` are written, so that costly fields are built only then. */
  enabled(level: number): boolean
  /** Returns a logger that adds `fields` to every line. */
  child(fields: LogFields): Logger
  /** Returns a logger whose lines carry `name` in `logger`, after its own name and a dot. */
  named(name: string): Logger
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** A named level, or a verbosity N that writes `V(1)` to `V(N)` too (info by default). */
  readonly level?: LogLevel | number
  readonly format?: LogFormat
  /** Receives each finished line, without the newline (stderr by default). */
  readonly write?: (line: string) => void
  readonly now?: () => Date
  /** Renders `ts` (zap's epoch: seconds as a float, by default). */
  readonly time?: (date: Date) => string | number
  /** Lines at or above this level carry the call's `stacktrace` (error by default). */
  readonly stacktraceLevel?: LogLevel | 'panic'
  /** Whether lines carry `caller`, the file and line of the call (true by default). */
  readonly caller?: boolean
}

/** The threshold of a level option: lines at a lower level are dropped. */
function thresholdOf(level: LogLevel | number | undefined): number {
  if (level === undefined) return SEVERITY.info
  return typeof level === 'number' ? -level : SEVERITY[level]
}

/** zap's level names: lowercase in JSON, capitals in the console layout. */
export function levelName(severity: number, capitals = false): string {
  const name =
    severity === -1
      ? 'debug'
      : severity === 0
        ? 'info'
        : severity === 1
          ? 'warn'
          : severity === 2
            ? 'error'
            : `Level(${severity})`
  return capitals ? name.toUpperCase() : name
}

/** An error as log fields: name and message, its stack only when debug is on, and its cause. */
function render(value: unknown, withStack: boolean): unknown {
  if (value instanceof Error) {
    const cause = value.cause === undefined ? {} : { cause: render(value.cause, withStack) }
    const stack = withStack && value.stack !== undefined ? { stack: value.stack } : {}
    return { name: value.name, message: value.message, ...stack, ...cause }
  }
  return value
}

/**
 * The frames of the logging call's stack, first the caller's, as `at ...` lines: at most
 * `limit` of them (V8's own limit when undefined). A line that needs only its caller captures one
 * frame: formatting a whole stack on every info line cost about 2 % of the engine's CPU.
 */
function callStack(from: (...args: never[]) => unknown, limit?: number): string[] {
  const holder: { stack?: string } = {}
  const saved = Error.stackTraceLimit
  if (limit !== undefined) Error.stackTraceLimit = limit
  try {
    Error.captureStackTrace(holder, from)
  } finally {
    Error.stackTraceLimit = saved
  }
  return (holder.stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
}

/** zap's short caller: the last directory and the file, with the line (`engine/engine.ts:42`). */
function shortCaller(frame: string | undefined): string | undefined {
  const match = /\(?(?:file:\/\/)?([^()\s]+):(\d+):\d+\)?$/.exec(frame ?? '')
  if (match === null) return undefined
  const parts = (match[1] ?? '').split('/')
  return `${parts.slice(-2).join('/')}:${match[2] ?? ''}`
}

interface Scope {
  readonly name: string
  readonly fields: LogFields
}

/** Creates a logger writing to stderr (or `options.write`). */
export function createLogger(options: LoggerOptions = {}, base: LogFields = {}): Logger {
  return scopedLogger(options, { name: '', fields: base })
}

function scopedLogger(options: LoggerOptions, scope: Scope): Logger {
  const threshold = thresholdOf(options.level)
  const stackFrom = SEVERITY[options.stacktraceLevel ?? 'error']
  const format = options.format ?? 'json'
  const write =
    options.write ??
    ((line: string): void => {
      process.stderr.write(`${line}\n`)
    })
  const now = options.now ?? ((): Date => new Date())
  const time = options.time ?? ((date: Date): number => date.getTime() / 1000)
  const emit = (
    severity: number,
    message: string,
    fields: LogFields,
    from: (...args: never[]) => unknown
  ): void => {
    if (severity < threshold) return
    const wantCaller = options.caller ?? true
    const withTrace = severity >= stackFrom
    const stack = withTrace ? callStack(from) : wantCaller ? callStack(from, 1) : []
    const all: Record<string, unknown> = {}
    for (const [key, value] of Object.entries({ ...scope.fields, ...fields }))
      all[key] = render(value, threshold <= SEVERITY.debug)
    const head = {
      level: levelName(severity, format === 'text'),
      ts: time(now()),
      ...(scope.name === '' ? {} : { logger: scope.name }),
      ...(wantCaller ? { caller: shortCaller(stack[0]) } : {}),
      msg: message,
    }
    const trace = withTrace ? stack.join('\n') : undefined
    write(format === 'json' ? jsonLine(head, all, trace) : consoleLine(head, all, trace))
  }
  const logger: Logger = {
    debug: function debug(message, fields = {}) {
      emit(SEVERITY.debug, message, fields, debug)
    },
    info: function info(message, fields = {}) {
      emit(SEVERITY.info, message, fields, info)
    },
    warn: function warn(message, fields = {}) {
      emit(SEVERITY.warn, message, fields, warn)
    },
    error: function error(message, fields = {}) {
      emit(SEVERITY.error, message, fields, error)
    },
    v: function v(level, message, fields = {}) {
      emit(-level, message, fields, v)
    },
    enabled: (level) => -level >= threshold,
    child: (fields) => scopedLogger(options, { ...scope, fields: { ...scope.fields, ...fields } }),
    named: (name) =>
      scopedLogger(options, { ...scope, name: scope.name === '' ? name : `${scope.name}.${name}` }),
  }
  return logger
}

interface Head {
  readonly level: string
  readonly ts: string | number
  readonly logger?: string
  readonly caller?: string | undefined
  readonly msg: string
}

function jsonLine(head: Head, fields: Record<string, unknown>, trace: string | undefined): string {
  return JSON.stringify({
    ...head,
    ...fields,
    ...(trace === undefined ? {} : { stacktrace: trace }),
  })
}

/** zap's console layout: tab-separated head, the fields as one JSON object, the stack below. */
function consoleLine(
  head: Head,
  fields: Record<string, unknown>,
  trace: string | undefined
): string {
  const parts = [String(head.ts), head.level]
  if (head.logger !== undefined) parts.push(head.logger)
  if (head.caller !== undefined) parts.push(head.caller)
  parts.push(head.msg)
  if (Object.keys(fields).length > 0) parts.push(JSON.stringify(fields))
  return parts.join('\t') + (trace === undefined ? '' : `\n${trace}`)
}

const nothing = (): void => undefined

/** A logger that drops everything, for tests and library defaults. */
export const silentLogger: Logger = {
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  v: nothing,
  enabled: () => false,
  child: () => silentLogger,
  named: () => silentLogger,
}
