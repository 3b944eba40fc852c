/**
 * Finds duplicate object keys in JSON text, which `JSON.parse` silently resolves to the last one.
 *
 * @remarks
 * Upstream decodes hook responses with `sigs.k8s.io/json`, which reports duplicate fields as
 * strict errors. The scanner here recovers them: it walks the text once, without recursion (so
 * deeply nested input cannot overflow the stack), and records each repeated key with its path.
 *
 * @module
 */

/** One step of a JSON path: an object key or an array index. */
export type JsonPathSegment = string | number

/**
 * A repeated key: the path of the object that repeats it, and the key, e.g. `['relatedResources',
 * 0]` and `'names'`.
 *
 * @remarks
 * Duplicates in one object share one `container` array (the same reference), so a caller can
 * classify each object once instead of once per duplicate.
 */
export interface DuplicateKey {
  readonly container: readonly JsonPathSegment[]
  readonly key: string
}

interface ObjectFrame {
  readonly type: 'object'
  readonly parent: Frame | undefined
  /** The key or index under which this object sits in its parent. */
  readonly segment: JsonPathSegment | undefined
  readonly keys: Set<string>
  /** Keys already reported, so a key repeated n times is reported once. */
  reported: Set<string> | undefined
  /** This object's path, built on its first duplicate. */
  path: readonly JsonPathSegment[] | undefined
  key: string | undefined
  expectingKey: boolean
}

interface ArrayFrame {
  readonly type: 'array'
  readonly parent: Frame | undefined
  readonly segment: JsonPathSegment | undefined
  index: number
}

type Frame = ObjectFrame | ArrayFrame

/**
 * Returns every duplicate key in a JSON document, once per object and key, in document order.
 *
 * @remarks
 * The text must already be valid JSON (parse it with `JSON.parse` first); on invalid text the
 * result is unspecified but the call does not throw. Keys are compared after unescaping, so
 * `"a"` and `"\u0061"` are the same key. The work is linear in the text plus the depth of
 * each object that repeats a key: a key repeated many times, at any depth, costs one path.
 */
export function findDuplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = []
  let top: Frame | undefined
  let i = 0
  const segmentForChild = (): JsonPathSegment | undefined =>
    top === undefined ? undefined : top.type === 'object' ? top.key : top.index
  while (i < text.length) {
    const char = text.charAt(i)
    switch (char) {
      case '{':
        top = {
          type: 'object',
          parent: top,
          segment: segmentForChild(),
          keys: new Set(),
          reported: undefined,
          path: undefined,
          key: undefined,
          expectingKey: true,
        }
        i++
        break
      case '[':
        top = { type: 'array', parent: top, segment: segmentForChild(), index: 0 }
        i++
        break
      case '}':
      case ']':
        top = top?.parent
        i++
        break
      case ',':
        if (top?.type === 'object') top.expectingKey = true
        else if (top?.type === 'array') top.index++
        i++
        break
      case '"': {
        const end = stringEnd(text, i)
        if (top?.type === 'object' && top.expectingKey) {
          const key = unquote(text.slice(i, end))
          if (!top.keys.has(key)) top.keys.add(key)
          else if (top.reported?.has(key) !== true) {
            top.reported ??= new Set()
            top.reported.add(key)
            top.path ??= pathOf(top)
            found.push({ container: top.path, key })
          }
          top.key = key
          top.expectingKey = false
        }
        i = end
        break
      }
      default:
        i++
    }
  }
  return found
}

/** Returns the offset just past the string literal that starts at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1
  while (i < text.length) {
    const char = text.charAt(i)
    if (char === '\\') i += 2
    else if (char === '"') return i + 1
    else i++
  }
  return text.length
}

function unquote(literal: string): string {
  if (!literal.includes('\\')) return literal.slice(1, -1)
  try {
    const value: unknown = JSON.parse(literal)
    return typeof value === 'string' ? value : literal
  } catch {
    return literal
  }
}

function pathOf(frame: Frame): JsonPathSegment[] {
  const path: JsonPathSegment[] = []
  for (let at: Frame | undefined = frame; at?.segment !== undefined; at = at.parent) {
    path.push(at.segment)
  }
  return path.reverse()
}
