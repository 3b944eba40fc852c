// The metric names a PromQL expression reads, for checking rules and dashboards against what the
// engine exports. A small scanner rather than a PromQL parser: it drops what cannot be a metric
// name (strings, label matchers, grouping clauses, range and subquery brackets, numbers,
// durations, keywords, function names) and keeps the identifiers left.

/** Words of PromQL that look like identifiers but are not metric names. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
])

/**
 * The metric names `expr` reads, sorted and without repeats. Grafana's `$variables` are dropped
 * with the brackets they sit in, and function names (an identifier followed by `(`) are skipped.
 */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+/g, ' ')
  const names = new Set<string>()
  for (const match of stripped.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const word = match[0]
    const rest = stripped.slice(match.index + word.length)
    if (KEYWORDS.has(word.toLowerCase()) || /^\s*\(/.test(rest)) continue
    // A number's exponent or a duration's unit (1e3, 5m) starts right after a digit.
    if (/[\d.]$/.test(stripped.slice(0, match.index))) continue
    names.add(word)
  }
  return [...names].sort()
}

/**
 * The series names a Prometheus text exposition offers: every sample's name, and for each
 * `# TYPE` line the names its type implies (a histogram's `_bucket`, `_sum`, `_count`), so a
 * family that has not been observed yet still counts as exported.
 */
export function exposedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>()
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line)
    if (type) {
      const [, name = '', kind] = type
      names.add(name)
      if (kind === 'histogram' || kind === 'summary') {
        for (const suffix of ['_sum', '_count']) names.add(name + suffix)
      }
      if (kind === 'histogram') names.add(`${name}_bucket`)
      continue
    }
    const sample = /^([A-Za-z_:][\w:]*)[{ ]/.exec(line)
    if (sample?.[1] !== undefined) names.add(sample[1])
  }
  return names
}
