/**
 * The syntax rules selectors check keys and values against: Kubernetes label keys and values,
 * and the {@link SelectorVocabulary} that lets annotation selectors bring rules of their own.
 *
 * @module
 */
import { LabelSelectorError } from './label-selector-error.js'

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

/** The error of an invalid selector over `vocabulary`, worded with its noun. */
export function invalidSelector(
  message: string,
  vocabulary: SelectorVocabulary
): LabelSelectorError {
  return new LabelSelectorError(`invalid ${vocabulary.noun} selector: ${message}`)
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

/** The rules of Kubernetes labels: qualified-name keys, label values. */
export const LABEL_VOCABULARY: SelectorVocabulary = {
  noun: 'label',
  exactField: 'matchLabels',
  keyProblem: labelKeyProblem,
  valueProblem: labelValueProblem,
}

/** Returns `key`, or throws a {@link LabelSelectorError} saying why it is invalid at `at`. */
export function checkKey(
  key: string,
  at: string,
  vocabulary: SelectorVocabulary = LABEL_VOCABULARY
): string {
  const problem = vocabulary.keyProblem(key)
  if (problem !== undefined) {
    const { noun } = vocabulary
    throw invalidSelector(
      `${at}: invalid ${noun} key ${JSON.stringify(key)}: ${problem}`,
      vocabulary
    )
  }
  return key
}

/** Returns `value`, or throws a {@link LabelSelectorError} saying why it is invalid at `at`. */
export function checkValue(
  value: string,
  at: string,
  vocabulary: SelectorVocabulary = LABEL_VOCABULARY
): string {
  const problem = vocabulary.valueProblem(value)
  if (problem !== undefined) {
    const { noun } = vocabulary
    throw invalidSelector(
      `${at}: invalid ${noun} value ${JSON.stringify(value)}: ${problem}`,
      vocabulary
    )
  }
  return value
}
