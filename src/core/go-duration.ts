/** The longest Go `time.Duration`, 2^63 - 1 ns, in ms. */
const GO_MAX_DURATION_MS = 9_223_372_036_854.775

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

/**
 * Parses a Go duration string (`10s`, `1m30s`, `1.5h`, `250ms`) into milliseconds, as Go's
 * `time.ParseDuration` does; returns `undefined` when the text is not a duration or is longer than
 * a Go duration can be (about 292 years).
 *
 * @remarks
 * Metacontroller fields such as `webhook.timeout` are Go durations (CRD `format: duration`).
 */
export function parseGoDuration(text: string): number | undefined {
  let rest = text.trim()
  if (rest === '') return undefined
  let sign = 1
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1
    rest = rest.slice(1)
  }
  if (rest === '0') return 0
  let totalMs = 0
  const part = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/
  if (rest === '') return undefined
  while (rest !== '') {
    const match = part.exec(rest)
    if (match === null) return undefined
    const [whole, value = '', unit = ''] = match
    totalMs += Number(value) * (UNIT_MS[unit] ?? Number.NaN)
    rest = rest.slice(whole.length)
  }
  // Go refuses what its int64 nanoseconds cannot hold (about 292 years) as invalid.
  return totalMs <= GO_MAX_DURATION_MS ? sign * totalMs : undefined
}
