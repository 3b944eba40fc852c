/**
 * The strict reader of one hook response body: Go-like type checks that throw, and the strict
 * issues (unknown and duplicate fields) that upstream's `UnmarshalStrict` would report, collected
 * on the way and applied by the decode mode at the end. What each hook's response holds is in
 * decode-response.ts.
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { messageOf } from '../../core/message-of.js'
import { HookResponseError } from '../hook-response-error.js'
import type { HookResponseSource } from '../hook-response-error.js'
import { findDuplicateKeys } from './duplicate-keys.js'
import type { JsonPathSegment } from './duplicate-keys.js'

/** A decoded response, plus the problems that were tolerated. */
export interface DecodedResponse<T> {
  readonly response: T
  /**
   * Non-fatal problems, for a log line: strict issues in `loose` mode (`unknown field "foo"`)
   * and skipped `null` entries.
   */
  readonly warnings: readonly string[]
}

/** A path into the response body. */
export type JsonPath = readonly JsonPathSegment[]

type Path = JsonPath

/**
 * Most strict issues an error or the warnings name; the rest are counted (`12 more`), so that a
 * body repeating keys thousands of times gives a message of a readable size.
 */
const MAX_LISTED_ISSUES = 20

/** Formats a JSON path for messages: `relatedResources[0].labelSelector`, `labels["a/b"]`. */
export function formatJsonPath(path: Path): string {
  let text = ''
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) text += text === '' ? segment : `.${segment}`
    else text += `[${JSON.stringify(segment)}]`
  }
  return text
}

/** Describes a JSON value for messages: `the string "x"`, `an array`, `nothing (…)`. */
export function describeJsonValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value
    return `the string ${JSON.stringify(shown)}`
  }
  if (typeof value === 'number') return `the number ${String(value)}`
  if (typeof value === 'boolean') return String(value)
  return 'an object'
}

function where(path: Path): string {
  return path.length === 0 ? 'the response body' : `"${formatJsonPath(path)}"`
}

function pathKey(path: Path): string {
  return JSON.stringify(path)
}

function isPrefix(prefix: Path, path: Path): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => segment === path[i])
}

/**
 * Reads one response: type checks that throw, and strict issues collected on the way.
 *
 * @remarks
 * Every typed object it reads is registered (known fields for structs, any key for maps, any
 * depth for free-form values), so that {@link ResponseReader.finish} can tell which duplicate
 * keys upstream would have noticed.
 */
export class ResponseReader {
  private readonly strictIssues = new Set<string>()
  private readonly warnings: string[] = []
  private readonly structs = new Map<string, ReadonlySet<string>>()
  private readonly maps = new Set<string>()
  /** The depth of the deepest struct or map registered. */
  private typedDepth = 0
  /** Paths of free-form values; a few at most (`status`), so a prefix scan is cheap. */
  private readonly freeRoots: Path[] = []

  constructor(
    private readonly body: string,
    private readonly source: HookResponseSource
  ) {}

  /** Parses the body; an empty or malformed body is a `syntax` error. */
  parse(): unknown {
    if (this.body.trim() === '') {
      throw new HookResponseError('syntax', this.source, ['the response body is empty'])
    }
    try {
      const value: unknown = JSON.parse(this.body)
      return value
    } catch (error) {
      const reason = messageOf(error)
      throw new HookResponseError('syntax', this.source, [`invalid JSON: ${reason}`], {
        cause: error,
      })
    }
  }

  /** Records a tolerated problem for the warnings. */
  warn(message: string): void {
    this.warnings.push(message)
  }

  /** Reads a typed object (Go struct); null and absent give undefined. */
  struct(value: unknown, path: Path, fields: readonly string[]): JsonObject | undefined {
    if (value === undefined || value === null) return undefined
    if (!isJsonObject(value)) {
      this.typeError(path, path.length === 0 ? 'a JSON object' : 'an object or null', value)
    }
    this.structs.set(pathKey(path), new Set(fields))
    this.typedDepth = Math.max(this.typedDepth, path.length)
    for (const name of Object.keys(value)) {
      if (!fields.includes(name))
        this.strictIssues.add(`unknown field "${formatJsonPath([...path, name])}"`)
    }
    return value
  }

  /** Reads a map (Go `map[string]…`); null and absent give undefined. */
  map(value: unknown, path: Path): JsonObject | undefined {
    if (value === undefined || value === null) return undefined
    if (!isJsonObject(value)) this.typeError(path, 'an object or null', value)
    this.maps.add(pathKey(path))
    this.typedDepth = Math.max(this.typedDepth, path.length)
    return value
  }

  /** Reads a free-form object (Go `map[string]interface{}`), e.g. `status`. */
  freeObject(value: unknown, path: Path): JsonObject | undefined {
    const object = this.map(value, path)
    if (object !== undefined) this.freeRoots.push(path)
    return object
  }

  /** Reads a list; null and absent give undefined. */
  list(value: unknown, path: Path): readonly unknown[] | undefined {
    if (value === undefined || value === null) return undefined
    if (!Array.isArray(value)) this.typeError(path, 'an array or null', value)
    return value as readonly unknown[]
  }

  /** Reads a string; null and absent give undefined. */
  string(value: unknown, path: Path): string | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'string') this.typeError(path, 'a string', value)
    return value
  }

  /** Reads a finite number; null and absent give undefined. */
  number(value: unknown, path: Path): number | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'number') this.typeError(path, 'a number', value)
    if (!Number.isFinite(value)) this.typeError(path, 'a number within the float64 range', value)
    return value
  }

  /** Reads a boolean; null and absent give undefined. */
  boolean(value: unknown, path: Path): boolean | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') this.typeError(path, 'true, false or null', value)
    return value
  }

  /** Reads a list of strings; `null` items are refused. */
  stringList(value: unknown, path: Path): string[] | undefined {
    const items = this.list(value, path)
    return items?.map((item, index) => {
      if (typeof item !== 'string') this.typeError([...path, index], 'a string', item)
      return item
    })
  }

  /** Adds the duplicate keys upstream would see, then applies the mode to all strict issues. */
  finish<T>(response: T): DecodedResponse<T> {
    const noticed = new Map<Path, ReadonlySet<string> | boolean>()
    let unlisted = 0
    for (const { container, key } of findDuplicateKeys(this.body)) {
      let keys = noticed.get(container)
      if (keys === undefined) {
        keys = this.noticedKeys(container)
        noticed.set(container, keys)
      }
      if (keys === false || (keys !== true && !keys.has(key))) continue
      // Only the listed issues are formatted: a path costs its depth, and a body can repeat keys
      // in thousands of deep objects.
      if (this.strictIssues.size < MAX_LISTED_ISSUES) {
        this.strictIssues.add(`duplicate field "${formatJsonPath([...container, key])}"`)
      } else unlisted++
    }
    const all = [...this.strictIssues]
    const more = all.length - MAX_LISTED_ISSUES + unlisted
    const issues = more > 0 ? [...all.slice(0, MAX_LISTED_ISSUES), `${more} more`] : all
    if (issues.length > 0 && this.source.mode === 'strict') {
      throw new HookResponseError('strict', this.source, issues)
    }
    return { response, warnings: [...issues, ...this.warnings] }
  }

  /**
   * Which duplicate keys of the object at `container` upstream notices: a struct's known
   * fields, every key of a map or of anything inside a free-form value (true), or none (false).
   */
  private noticedKeys(container: Path): ReadonlySet<string> | boolean {
    if (this.freeRoots.some((root) => isPrefix(root, container))) return true
    // Typed objects sit a few levels deep; a deeper path cannot be one, and building its key
    // would cost its depth for each of possibly thousands of objects.
    if (container.length > this.typedDepth) return false
    const fields = this.structs.get(pathKey(container))
    if (fields !== undefined) return fields
    return this.maps.has(pathKey(container))
  }

  /** Throws the `type` error: `path` must be `expected`, not `value`. */
  typeError(path: Path, expected: string, value: unknown): never {
    throw new HookResponseError('type', this.source, [
      `${where(path)} must be ${expected}, got ${describeJsonValue(value)}`,
    ])
  }

  /** Throws the `invalid` error of `path`. */
  invalid(path: Path, message: string): never {
    throw new HookResponseError('invalid', this.source, [`${where(path)}: ${message}`])
  }
}
