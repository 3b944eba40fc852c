/**
 * JSON text byte-for-byte as Go's `encoding/json` writes it for decoded Kubernetes objects.
 *
 * @remarks
 * Upstream Metacontroller stores strings it produced with `json.Marshal` on live objects (the
 * last-applied annotation; ControllerRevision patches and their hashes). A drop-in replacement has
 * to produce the same bytes, otherwise every object written by upstream looks changed to us once
 * after a migration (an extra PUT, or a delete and create under the Recreate strategy). Go differs
 * from `JSON.stringify` in two ways that matter: object keys are sorted, and `<`, `>`, `&`,
 * U+2028 and U+2029 are escaped. Numbers already agree: Go writes integers in decimal and floats in
 * the shortest form that round-trips, switching to exponent form below 1e-6 and from 1e21 on,
 * exactly like JavaScript. (Integers beyond 2^53 have lost digits when JavaScript parsed them;
 * that cannot be undone here.)
 *
 * @module
 */

/**
 * Encodes a JSON value the way Go's `json.Marshal` encodes the equivalent `interface{}` value.
 *
 * @remarks
 * Object keys are sorted by {@link compareGoStrings}; properties whose value is `undefined` are
 * skipped and `undefined` array items become `null`, as with `JSON.stringify`. Non-finite numbers
 * and values that are not JSON (functions, symbols, bigints) are refused with a `TypeError`, as Go
 * refuses NaN and infinities.
 */
export function marshalGoJson(value: unknown): string {
  const parts: string[] = []
  writeValue(value, parts)
  return parts.join('')
}

/**
 * Orders two strings the way Go compares them: by their UTF-8 bytes, which is code point order.
 *
 * @remarks
 * JavaScript's default `<` compares UTF-16 code units, which puts characters above U+FFFF (stored
 * as surrogate pairs) before U+E000..U+FFFF. Go's `sort.Strings`, used for map keys by both
 * `encoding/json` and `fmt`, puts them after.
 */
export function compareGoStrings(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

/** Moves surrogates above the rest of the BMP, so code units sort in code point order. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000
  if (unit >= 0xe000) return unit - 0x800
  return unit
}

function writeValue(value: unknown, parts: string[]): void {
  switch (typeof value) {
    case 'string':
      parts.push(quoteGoString(value))
      return
    case 'number':
      parts.push(formatNumber(value))
      return
    case 'boolean':
      parts.push(value ? 'true' : 'false')
      return
    case 'object':
      if (value === null) {
        parts.push('null')
      } else if (Array.isArray(value)) {
        writeArray(value as readonly unknown[], parts)
      } else {
        writeObject(value as Readonly<Record<string, unknown>>, parts)
      }
      return
    case 'undefined':
      // Only reachable as an array item; JSON.stringify writes null there too.
      parts.push('null')
      return
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new TypeError(`JSON cannot encode a ${typeof value}`)
  }
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`JSON cannot encode the number ${value}`)
  // JavaScript's shortest round-trip form is Go's: see the module remarks.
  return JSON.stringify(value)
}

function writeArray(items: readonly unknown[], parts: string[]): void {
  parts.push('[')
  items.forEach((item, index) => {
    if (index > 0) parts.push(',')
    writeValue(item, parts)
  })
  parts.push(']')
}

function writeObject(object: Readonly<Record<string, unknown>>, parts: string[]): void {
  const keys = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort(compareGoStrings)
  parts.push('{')
  keys.forEach((key, index) => {
    if (index > 0) parts.push(',')
    parts.push(quoteGoString(key), ':')
    writeValue(object[key], parts)
  })
  parts.push('}')
}

const SHORT_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x22, '\\"'],
  [0x5c, '\\\\'],
  [0x08, '\\b'],
  [0x0c, '\\f'],
  [0x0a, '\\n'],
  [0x0d, '\\r'],
  [0x09, '\\t'],
])

function quoteGoString(text: string): string {
  let quoted = '"'
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    let escape: string | undefined
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(i + 1)
      if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++
        continue
      }
      // An unpaired surrogate: Go's decoder turns its escape into U+FFFD, written raw.
      escape = '\ufffd'
    } else {
      escape =
        SHORT_ESCAPES.get(unit) ?? (needsUnicodeEscape(unit) ? unicodeEscape(unit) : undefined)
    }
    if (escape === undefined) continue
    quoted += text.slice(start, i) + escape
    start = i + 1
  }
  return `${quoted}${text.slice(start)}"`
}

/**
 * Tells whether Go writes a code unit as `\uXXXX`: control characters without a short escape
 * (Go has used `\b` and `\f` since 1.22), the HTML-sensitive `<`, `>` and `&`, and U+2028 and
 * U+2029, which are line terminators in JavaScript source.
 */
function needsUnicodeEscape(unit: number): boolean {
  return (
    unit < 0x20 ||
    unit === 0x3c ||
    unit === 0x3e ||
    unit === 0x26 ||
    unit === 0x2028 ||
    unit === 0x2029
  )
}

/** Writes `\uXXXX` with lower-case hex digits, as Go does. */
function unicodeEscape(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, '0')}`
}
