/**
 * Kubernetes resource quantities as the API server stores them in a Pod.
 *
 * @remarks
 * The API server rewrites the quantities of a Pod (`0.5` becomes `500m`, `1024Mi` becomes `1Gi`).
 * The engine compares what the hook asks for with what is stored, and the Pod child uses the
 * Recreate strategy, so a rewritten quantity would look like a change on every sync and recreate
 * the Pod forever. The hook therefore sends each quantity the way the server will store it,
 * computed here as k8s.io/apimachinery's `resource.ParseQuantity`, the Pod defaulting (round up
 * to milli) and `Quantity.String()` do it.
 *
 * @module
 */

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
}
const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
}
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]))
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]))
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/
const NANOS_PER_UNIT = 10n ** 9n
const MILLIS_PER_UNIT = 10n ** 3n
const NANOS_PER_MILLI = 10n ** 6n
const MAX_INT64_NANOS = (2n ** 63n - 1n) * NANOS_PER_UNIT

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent'

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent)
}

function interpretSuffix(suffix: string): { binary: boolean; exponent: number; format: Format } {
  const binary = BINARY_SUFFIXES[suffix]
  if (binary !== undefined) return { binary: true, exponent: binary, format: 'BinarySI' }
  const decimal = DECIMAL_SUFFIXES[suffix]
  if (decimal !== undefined) return { binary: false, exponent: decimal, format: 'DecimalSI' }
  return { binary: false, exponent: Number(suffix.slice(1)), format: 'DecimalExponent' }
}

/** Divides and rounds away from zero (inputs are non-negative). */
function divideUp(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator
  return numerator % denominator === 0n ? quotient : quotient + 1n
}

/**
 * Returns the string the API server stores for a quantity in a Pod's resources (`0.5` → `500m`,
 * `1024Mi` → `1Gi`, `100m` → `100m`), or undefined when the text is not a quantity.
 *
 * @remarks
 * As `resource.ParseQuantity`, the Pod defaulting (`RoundUp` to milli) and `Quantity.String()`
 * do it: a text already in canonical form is kept as written; any other is rewritten in canonical
 * form after rounding up to a multiple of 1m. Checked value by value against kube-apiserver
 * v1.37 (see hook.unit.test.ts), overflow quirks included.
 */
export function podQuantity(text: string): string | undefined {
  const match = QUANTITY.exec(text)
  if (match === null) return undefined
  const [, sign = '', whole = '', denom = '', suffix = ''] = match
  if (whole === '' && denom === '') return undefined
  const num = whole.replace(/^0+/, '') || '0'
  const { binary, exponent, format } = interpretSuffix(suffix)

  // The value as numerator / denominator, and in nanos once rounded.
  let numerator = BigInt(`${num}${denom}`)
  let denominator = pow10(denom.length)
  if (binary) numerator *= 2n ** BigInt(exponent)
  else if (exponent >= 0) numerator *= pow10(exponent)
  else denominator *= pow10(-exponent)

  // ParseQuantity keeps the text when it fits an int64 with at most nano precision and is
  // already canonical; the Pod defaulting then drops it when the scale is finer than milli.
  let keepText = false
  let scale = -9
  const precision = binary
    ? denom.length === 0 && exponent >= 0
      ? 15 - num.length - Math.trunc((exponent * 3) / 10) - 1
      : -1
    : 18 - (num.length + denom.length)
  const fastScale = binary ? 0 : exponent - denom.length
  if (
    precision >= 0 &&
    fastScale >= -9 &&
    (numerator * pow10(9)) / denominator <= MAX_INT64_NANOS
  ) {
    const shifted = `${num}${denom}`
    const value = BigInt(shifted)
    keepText = binary
      ? exponent % 10 === 0 && (value & 7n) !== 0n
      : fastScale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0')
    scale = fastScale
  }
  if (scale < -3) keepText = false
  if (keepText) return text

  let nanos = divideUp(numerator * MILLIS_PER_UNIT, denominator) * NANOS_PER_MILLI
  if (nanos === 0n) return '0'
  const minus = sign === '-' ? '-' : ''
  // Binary quantities are capped at the largest int64.
  if (format === 'BinarySI' && nanos > MAX_INT64_NANOS) nanos = MAX_INT64_NANOS
  let shown: Format = format
  if (format === 'BinarySI') {
    // Below 1024, or not a whole number: shown as decimal SI so that nothing is lost.
    if (nanos < 1024n * NANOS_PER_UNIT || nanos % NANOS_PER_UNIT !== 0n) {
      shown = 'DecimalSI'
    } else {
      let value = nanos / NANOS_PER_UNIT
      let exponent2 = 0
      while (value >= 1024n && value % 1024n === 0n) {
        value /= 1024n
        exponent2 += 10
      }
      const binarySuffix = exponent2 === 0 ? '' : (BINARY_BY_EXPONENT.get(exponent2) ?? '')
      return `${minus}${value}${binarySuffix}`
    }
  }

  let mantissa = nanos
  let exponent10 = -9
  while (mantissa >= 10n && mantissa % 10n === 0n) {
    mantissa /= 10n
    exponent10++
  }
  while (exponent10 % 3 !== 0) {
    mantissa *= 10n
    exponent10--
  }
  const decimalSuffix =
    shown === 'DecimalExponent'
      ? exponent10 === 0
        ? ''
        : `e${exponent10}`
      : // Beyond E the API server writes no suffix at all; so do we, to match what it stores.
        (DECIMAL_BY_EXPONENT.get(exponent10) ?? '')
  return `${minus}${mantissa}${decimalSuffix}`
}
