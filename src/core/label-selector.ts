/**
 * Kubernetes label selectors: compiled matchers, the string syntax, and its string form.
 *
 * @remarks
 * The semantics follow `metav1.LabelSelectorAsSelector` and `labels.Parse`. `matchLabels` entries
 * and `matchExpressions` are ANDed. `NotIn` and `DoesNotExist` match objects that lack the key.
 * Keys must be qualified names (`[prefix/]name`) and values valid label values. A nil or empty
 * selector matches everything; callers that must refuse empty selectors (a CompositeController
 * parent's `spec.selector`) check {@link isEmptySelector} first.
 *
 * Annotation selectors (`annotation-selector.ts`) reuse the same requirements and matching through
 * {@link compileMapSelector}, with their own key and value rules.
 *
 * {@link LabelSelector} is structurally identical to `LabelSelectorSpec` in `api/hook-model.ts`
 * (core cannot import api), so a value of either type can be used wherever the other is expected.
 *
 * @module
 */
import { isJsonObject } from './kube-object.js'
import type { LabelSelectorError } from './label-selector-error.js'
import { checkKey, checkValue, invalidSelector, LABEL_VOCABULARY } from './label-syntax.js'
import type { SelectorVocabulary } from './label-syntax.js'

/** An operator of a `matchExpressions` entry. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'

/** One `matchExpressions` entry of a label selector. */
export interface LabelSelectorRequirement {
  readonly key: string
  readonly operator: LabelSelectorOperator
  /** Required (non-empty) for `In` and `NotIn`; must be absent or empty otherwise. */
  readonly values?: readonly string[]
}

/** A label selector as in Kubernetes `metav1.LabelSelector`. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>
  readonly matchExpressions?: readonly LabelSelectorRequirement[]
}

/** Tells whether a set of labels (absent means none) matches a compiled selector. */
export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean

const OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist']

/** Tells whether a value is one of the four `matchExpressions` operators (case-sensitive). */
export function isLabelSelectorOperator(value: unknown): value is LabelSelectorOperator {
  return typeof value === 'string' && OPERATORS.includes(value)
}

/** Tells whether a selector is nil or has no `matchLabels` and no `matchExpressions`. */
export function isEmptySelector(selector: LabelSelector | null | undefined): boolean {
  if (selector === null || selector === undefined) return true
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  )
}

/**
 * Compiles a selector into a matcher; a nil or empty selector matches everything.
 *
 * @remarks
 * The selector is validated first, also at run time (it may come from JSON): an unknown operator,
 * `In`/`NotIn` without values, `Exists`/`DoesNotExist` with values, or an invalid label key or
 * value throws a {@link LabelSelectorError}.
 */
export function compileLabelSelector(selector: LabelSelector | null | undefined): LabelMatcher {
  if (selector === null || selector === undefined) return matchEverything
  return compileMapSelector(selector.matchLabels, selector.matchExpressions, LABEL_VOCABULARY)
}

/**
 * Compiles the two parts of a selector over any string map (labels, annotations) into a matcher.
 *
 * @remarks
 * Both parts may come straight from JSON and are validated with `vocabulary`'s rules; problems
 * throw a {@link LabelSelectorError} worded with its noun. No requirements match everything.
 */
export function compileMapSelector(
  exact: unknown,
  expressions: unknown,
  vocabulary: SelectorVocabulary
): LabelMatcher {
  const requirements = requirementsOf(exact, expressions, vocabulary)
  if (requirements.length === 0) return matchEverything
  return (labels) => requirements.every((requirement) => satisfies(requirement, labels))
}

/**
 * A requirement an index can answer: the label `key` must have one of `values` (a `matchLabels`
 * entry, or a `matchExpressions` entry with operator `In`).
 */
export interface EqualityTerm {
  readonly key: string
  /** Sorted and deduplicated; never empty. */
  readonly values: readonly string[]
}

/**
 * Returns the requirements of a selector that only objects with one of a few values of a key
 * match, so that a cache indexed by label can find the candidates without a scan.
 *
 * @remarks
 * Every object the selector matches satisfies every term, so intersecting with any term's
 * objects loses nothing; the full selector still has to be checked on what a term finds. A nil
 * or empty selector has none. Invalid selectors throw a {@link LabelSelectorError}.
 */
export function equalityTerms(selector: LabelSelector | null | undefined): EqualityTerm[] {
  if (selector === null || selector === undefined) return []
  return requirementsOf(selector.matchLabels, selector.matchExpressions, LABEL_VOCABULARY)
    .filter((requirement) => requirement.operator === 'Equals' || requirement.operator === 'In')
    .map(({ key, values }) => ({ key, values }))
}

/**
 * Formats a selector in the string syntax, e.g. for the API's `labelSelector` query parameter.
 *
 * @remarks
 * Requirements are sorted by key and values are sorted and deduplicated, as Kubernetes prints
 * them, so equal selectors give equal strings; a nil or empty selector gives `''`. The output
 * parses back with {@link parseSelectorString} (and the API server) to a selector that matches
 * exactly the same label sets. Invalid selectors throw a {@link LabelSelectorError}.
 */
export function formatSelector(selector: LabelSelector | null | undefined): string {
  if (selector === null || selector === undefined) return ''
  return requirementsOf(selector.matchLabels, selector.matchExpressions, LABEL_VOCABULARY)
    .sort((a, b) => compareStrings(a.key, b.key))
    .map(formatRequirement)
    .join(',')
}

/** A validated requirement; `Equals` comes from `matchLabels`. */
interface Requirement {
  readonly key: string
  readonly operator: 'Equals' | LabelSelectorOperator
  /** Sorted and deduplicated. */
  readonly values: readonly string[]
}

function matchEverything(): boolean {
  return true
}

function satisfies(
  requirement: Requirement,
  labels: Readonly<Record<string, string>> | undefined
): boolean {
  const value =
    labels !== undefined && Object.hasOwn(labels, requirement.key)
      ? labels[requirement.key]
      : undefined
  switch (requirement.operator) {
    case 'Equals':
    case 'In':
      return value !== undefined && requirement.values.includes(value)
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value)
    case 'Exists':
      return value !== undefined
    case 'DoesNotExist':
      return value === undefined
  }
}

function formatRequirement(requirement: Requirement): string {
  const { key, values } = requirement
  // `in ()` would not parse back; `(,)` is the one-empty-value set.
  const list = values.length === 1 && values[0] === '' ? ',' : values.join(',')
  switch (requirement.operator) {
    case 'Equals':
      return `${key}=${values[0] ?? ''}`
    case 'In':
      return `${key} in (${list})`
    case 'NotIn':
      return `${key} notin (${list})`
    case 'Exists':
      return key
    case 'DoesNotExist':
      return `!${key}`
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean')
    return `${typeof value} ${String(value)}`
  return typeof value === 'object' ? 'an object' : typeof value
}

/** Validates the parts of a selector (typed or straight from JSON) into requirements. */
function requirementsOf(
  exact: unknown,
  expressions: unknown,
  vocabulary: SelectorVocabulary
): Requirement[] {
  const requirements: Requirement[] = []
  const { noun, exactField } = vocabulary
  if (exact !== undefined && exact !== null) {
    if (!isJsonObject(exact)) {
      throw invalidSelector(
        `${exactField} must be an object of ${noun} keys to values, not ${describe(exact)}`,
        vocabulary
      )
    }
    for (const [key, value] of Object.entries(exact)) {
      const at = `${exactField}[${JSON.stringify(key)}]`
      if (typeof value !== 'string') {
        throw invalidSelector(
          `${at} must be a string ${noun} value, not ${describe(value)}`,
          vocabulary
        )
      }
      requirements.push({
        key: checkKey(key, at, vocabulary),
        operator: 'Equals',
        values: [checkValue(value, at, vocabulary)],
      })
    }
  }
  if (expressions !== undefined && expressions !== null) {
    if (!Array.isArray(expressions)) {
      throw invalidSelector(
        `matchExpressions must be a list, not ${describe(expressions)}`,
        vocabulary
      )
    }
    for (const [index, expression] of (expressions as unknown[]).entries()) {
      requirements.push(requirementOf(expression, `matchExpressions[${index}]`, vocabulary))
    }
  }
  return requirements
}

function requirementOf(
  expression: unknown,
  at: string,
  vocabulary: SelectorVocabulary
): Requirement {
  const invalidHere = (message: string): LabelSelectorError => invalidSelector(message, vocabulary)
  if (!isJsonObject(expression)) {
    throw invalidHere(
      `${at} must be an object with "key", "operator" and "values", not ${describe(expression)}`
    )
  }
  const key = expression['key']
  if (typeof key !== 'string') throw invalidHere(`${at}.key must be a string, not ${describe(key)}`)
  checkKey(key, `${at}.key`, vocabulary)
  const operator = expression['operator']
  const where = `${at} (key ${JSON.stringify(key)})`
  if (!isLabelSelectorOperator(operator)) {
    throw invalidHere(
      `${where}: operator ${describe(operator)} is not one of In, NotIn, Exists, DoesNotExist ` +
        `(operators are case-sensitive)`
    )
  }
  const rawValues = expression['values']
  const values: string[] = []
  if (rawValues !== undefined && rawValues !== null) {
    if (!Array.isArray(rawValues)) {
      throw invalidHere(`${where}: values must be a list of strings, not ${describe(rawValues)}`)
    }
    for (const value of rawValues as unknown[]) {
      if (typeof value !== 'string') {
        throw invalidHere(`${where}: values must be a list of strings, found ${describe(value)}`)
      }
      values.push(checkValue(value, `${where}: values`, vocabulary))
    }
  }
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
    throw invalidHere(`${where}: operator ${operator} needs at least one entry in "values"`)
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
    throw invalidHere(
      `${where}: operator ${operator} takes no values; remove "values" (got ${JSON.stringify(values)})`
    )
  }
  return { key, operator, values: [...new Set(values)].sort(compareStrings) }
}
