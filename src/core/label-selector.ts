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
import { LabelSelectorError } from './label-selector-error.js'

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
  return compileMapSelector(selector.matchLabels, selector.matchExpressions, LABELS)
}

/**
 * What a selector selects over: how its keys and values are validated and how errors name them.
 *
 * @remarks
 * Labels and annotations share the selector semantics but not the syntax rules (annotation values
 * are free text), so the one implementation of requirements and matching takes the rules as data.
 */
export interface SelectorVocabulary {
  /** The thing selected, for error messages: `label` or `annotation`. */
  readonly noun: string
  /** The field holding the exact matches: `matchLabels` or `matchAnnotations`. */
  readonly exactField: string
  /** Returns why a key is invalid, or undefined when it is valid. */
  readonly keyProblem: (key: string) => string | undefined
  /** Returns why a value is invalid, or undefined when it is valid. */
  readonly valueProblem: (value: string) => string | undefined
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
  return requirementsOf(selector.matchLabels, selector.matchExpressions, LABELS)
    .filter((requirement) => requirement.operator === 'Equals' || requirement.operator === 'In')
    .map(({ key, values }) => ({ key, values }))
}

/**
 * Parses the string syntax of `--target-label-selector` and the API's `labelSelector` query.
 *
 * @remarks
 * Comma-separated requirements, all ANDed: `a=b` or `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x,y)`, `a` (exists) and `!a` (does not exist). Whitespace around tokens is ignored
 * and the empty string selects everything. `a!=b` becomes `NotIn [b]`, which has the same meaning
 * (it also matches objects without the key). The `>` and `<` operators of `labels.Parse` cannot be
 * expressed as a {@link LabelSelector} and are refused. Errors are {@link LabelSelectorError}s
 * that name the column and what was expected there.
 */
export function parseSelectorString(text: string): LabelSelector {
  return new SelectorParser(text).parse()
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
  return requirementsOf(selector.matchLabels, selector.matchExpressions, LABELS)
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

function invalid(message: string, vocabulary: SelectorVocabulary): LabelSelectorError {
  return new LabelSelectorError(`invalid ${vocabulary.noun} selector: ${message}`)
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
      throw invalid(
        `${exactField} must be an object of ${noun} keys to values, not ${describe(exact)}`,
        vocabulary
      )
    }
    for (const [key, value] of Object.entries(exact)) {
      const at = `${exactField}[${JSON.stringify(key)}]`
      if (typeof value !== 'string') {
        throw invalid(`${at} must be a string ${noun} value, not ${describe(value)}`, vocabulary)
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
      throw invalid(`matchExpressions must be a list, not ${describe(expressions)}`, vocabulary)
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
  const invalidHere = (message: string): LabelSelectorError => invalid(message, vocabulary)
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

const NAME_PART = /^(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/
const NAME_RULE =
  "alphanumeric characters, '-', '_' or '.', and start and end with an alphanumeric character"

/** Returns why a label key is invalid (Kubernetes `IsQualifiedName`), or undefined if valid. */
export function labelKeyProblem(key: string): string | undefined {
  let name = key
  const slash = key.indexOf('/')
  if (slash !== -1) {
    const prefix = key.slice(0, slash)
    name = key.slice(slash + 1)
    if (name.includes('/')) return 'a key may contain at most one "/"'
    if (prefix === '') return 'the prefix before "/" must not be empty'
    if (prefix.length > 253) return 'the prefix before "/" must be at most 253 characters'
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return 'the prefix before "/" must be a lowercase DNS subdomain such as example.com'
    }
  }
  if (name === '') return 'the name part must not be empty'
  if (name.length > 63) return 'the name part must be at most 63 characters'
  if (!NAME_PART.test(name)) return `the name part must consist of ${NAME_RULE}`
  return undefined
}

/** Returns why a label value is invalid (Kubernetes `IsValidLabelValue`), or undefined. */
function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined
  if (value.length > 63) return 'a label value must be at most 63 characters'
  if (!NAME_PART.test(value)) return `a label value must be empty or consist of ${NAME_RULE}`
  return undefined
}

const LABELS: SelectorVocabulary = {
  noun: 'label',
  exactField: 'matchLabels',
  keyProblem: labelKeyProblem,
  valueProblem: labelValueProblem,
}

function checkKey(key: string, at: string, vocabulary: SelectorVocabulary = LABELS): string {
  const problem = vocabulary.keyProblem(key)
  if (problem !== undefined) {
    const { noun } = vocabulary
    throw invalid(`${at}: invalid ${noun} key ${JSON.stringify(key)}: ${problem}`, vocabulary)
  }
  return key
}

function checkValue(value: string, at: string, vocabulary: SelectorVocabulary = LABELS): string {
  const problem = vocabulary.valueProblem(value)
  if (problem !== undefined) {
    const { noun } = vocabulary
    throw invalid(`${at}: invalid ${noun} value ${JSON.stringify(value)}: ${problem}`, vocabulary)
  }
  return value
}

type TokenType = 'identifier' | '!' | '!=' | '=' | '==' | '(' | ')' | ',' | '>' | '<' | 'end'

interface Token {
  readonly type: TokenType
  readonly text: string
  /** Offset of the token in the selector text. */
  readonly offset: number
}

const WHITESPACE = new Set([' ', '\t', '\r', '\n'])
const SPECIAL = new Set(['!', '=', '(', ')', ',', '>', '<'])

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const char = text.charAt(i)
    if (WHITESPACE.has(char)) {
      i++
      continue
    }
    const offset = i
    if ((char === '!' || char === '=') && text.charAt(i + 1) === '=') {
      const type = char === '!' ? '!=' : '=='
      tokens.push({ type, text: type, offset })
      i += 2
    } else if (SPECIAL.has(char)) {
      tokens.push({ type: char as TokenType, text: char, offset })
      i++
    } else {
      while (i < text.length && !SPECIAL.has(text.charAt(i)) && !WHITESPACE.has(text.charAt(i))) {
        i++
      }
      tokens.push({ type: 'identifier', text: text.slice(offset, i), offset })
    }
  }
  tokens.push({ type: 'end', text: '', offset: text.length })
  return tokens
}

/** A recursive-descent parser for the `labels.Parse` grammar (minus `>` and `<`). */
class SelectorParser {
  private readonly tokens: Token[]
  private position = 0

  constructor(private readonly text: string) {
    this.tokens = tokenize(text)
  }

  parse(): LabelSelector {
    const requirements: Requirement[] = []
    if (this.peek().type !== 'end') {
      for (;;) {
        requirements.push(this.requirement())
        const token = this.next()
        if (token.type === 'end') break
        if (token.type !== ',') this.fail(token, `expected "," or the end of the selector`)
        const following = this.peek()
        if (following.type !== 'identifier' && following.type !== '!') {
          this.fail(following, 'expected a requirement after ","')
        }
      }
    }
    return toLabelSelector(requirements)
  }

  private requirement(): Requirement {
    let token = this.next()
    const negated = token.type === '!'
    if (negated) token = this.next()
    if (token.type !== 'identifier') {
      this.fail(token, negated ? 'expected a label key after "!"' : 'expected a label key or "!"')
    }
    const key = this.check(token, () => checkKey(token.text, 'key'))
    if (negated) return { key, operator: 'DoesNotExist', values: [] }
    const following = this.peek()
    if (following.type === 'end' || following.type === ',') {
      return { key, operator: 'Exists', values: [] }
    }
    const operator = this.next()
    switch (operator.type) {
      case '=':
      case '==':
        return { key, operator: 'Equals', values: [this.exactValue()] }
      case '!=':
        return { key, operator: 'NotIn', values: [this.exactValue()] }
      case '>':
      case '<':
        return this.fail(
          operator,
          `the "${operator.type}" operator is not supported here; use =, !=, in or notin`
        )
      case 'identifier':
        if (operator.text === 'in' || operator.text === 'notin') {
          const values = this.valueList(operator)
          return { key, operator: operator.text === 'in' ? 'In' : 'NotIn', values }
        }
        break
      case '!':
      case '(':
      case ')':
      case ',':
      case 'end':
        break
    }
    return this.fail(operator, 'expected an operator: =, ==, !=, in or notin')
  }

  private exactValue(): string {
    const following = this.peek()
    if (following.type === 'end' || following.type === ',') return ''
    const token = this.next()
    if (token.type !== 'identifier') this.fail(token, 'expected a label value')
    return this.check(token, () => checkValue(token.text, 'value'))
  }

  private valueList(operator: Token): string[] {
    const open = this.next()
    if (open.type !== '(') this.fail(open, `expected "(" after "${operator.text}"`)
    const values: string[] = []
    let current: Token | undefined
    let sawComma = false
    for (;;) {
      const token = this.next()
      if (token.type === 'identifier') {
        if (current !== undefined) this.fail(token, 'expected "," or ")" between values')
        current = token
      } else if (token.type === ',' || token.type === ')') {
        if (current !== undefined || token.type === ',' || sawComma) {
          const item = current
          values.push(
            item === undefined ? '' : this.check(item, () => checkValue(item.text, 'value'))
          )
        }
        if (token.type === ')') break
        current = undefined
        sawComma = true
      } else {
        this.fail(token, 'expected a value, "," or ")"')
      }
    }
    if (values.length === 0) {
      this.fail(open, `operator ${operator.text} needs at least one value inside "( )"`)
    }
    return [...new Set(values)]
  }

  private peek(): Token {
    return this.tokens[this.position] ?? this.endToken()
  }

  private next(): Token {
    const token = this.peek()
    if (token.type !== 'end') this.position++
    return token
  }

  private endToken(): Token {
    return { type: 'end', text: '', offset: this.text.length }
  }

  /** Runs a validation and rethrows its error with the selector text and column. */
  private check<T>(token: Token, validate: () => T): T {
    try {
      return validate()
    } catch (error) {
      if (!(error instanceof LabelSelectorError)) throw error
      const reason = error.message.replace(/^invalid label selector: (?:key|value): /, '')
      return this.fail(token, reason)
    }
  }

  private fail(token: Token, reason: string): never {
    const found = token.type === 'end' ? 'the end of the selector' : JSON.stringify(token.text)
    const detail = reason.startsWith('expected') ? `${reason}, found ${found}` : reason
    throw new LabelSelectorError(
      `invalid label selector ${JSON.stringify(this.text)}: at column ${token.offset + 1}: ` +
        `${detail} (syntax: "a=b,c!=d,e in (x,y),f notin (z),g,!h")`,
      this.text
    )
  }
}

function toLabelSelector(requirements: readonly Requirement[]): LabelSelector {
  const matchLabels: Record<string, string> = {}
  const matchExpressions: LabelSelectorRequirement[] = []
  for (const { key, operator, values } of requirements) {
    if (operator === 'Equals' && !Object.hasOwn(matchLabels, key)) {
      matchLabels[key] = values[0] ?? ''
    } else if (operator === 'Equals') {
      matchExpressions.push({ key, operator: 'In', values })
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      matchExpressions.push({ key, operator })
    } else {
      matchExpressions.push({ key, operator, values })
    }
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  }
}
