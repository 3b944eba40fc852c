/**
 * Annotation selectors: label-selector semantics applied to `metadata.annotations`.
 *
 * @remarks
 * A DecoratorController resource rule may carry an `annotationSelector` next to its
 * `labelSelector`; an object must match both. `matchAnnotations` entries and `matchExpressions`
 * are ANDed, and `NotIn` and `DoesNotExist` match objects that lack the key, exactly as for labels.
 *
 * Only the syntax rules differ. Annotation values are free text (JSON, URLs, sentences, longer than
 * 63 characters), so values are not checked at all; an `In` list may hold any strings. Keys are
 * checked the way the API server checks annotation keys: a qualified name after lowercasing, so
 * `Example.COM/Owner` is accepted where a label key would be refused.
 *
 * @module
 */
import type { LabelMatcher, LabelSelectorRequirement } from './label-selector.js'
import { compileMapSelector } from './label-selector.js'
import { labelKeyProblem } from './label-syntax.js'
import type { SelectorVocabulary } from './label-syntax.js'

/** An annotation selector (`resources[].annotationSelector` of a DecoratorController). */
export interface AnnotationSelector {
  /** Exact annotation matches, ANDed; values may be any text. */
  readonly matchAnnotations?: Readonly<Record<string, string>>
  /** Requirements on annotations, ANDed, with the operators of label selectors. */
  readonly matchExpressions?: readonly LabelSelectorRequirement[]
}

/** Tells whether a set of annotations (absent means none) matches a compiled selector. */
export type AnnotationMatcher = LabelMatcher

const ANNOTATIONS: SelectorVocabulary = {
  noun: 'annotation',
  exactField: 'matchAnnotations',
  // The API server validates annotation keys as qualified names after lowercasing them.
  keyProblem: (key) => labelKeyProblem(key.toLowerCase()),
  // Annotation values are free text; the only API limit is the total size of all annotations.
  valueProblem: () => undefined,
}

/**
 * Compiles an annotation selector into a matcher; a nil or empty selector matches everything.
 *
 * @remarks
 * The selector is validated first, also at run time (it may come from JSON): an unknown operator,
 * `In`/`NotIn` without values, `Exists`/`DoesNotExist` with values, or an invalid annotation key
 * throws a `LabelSelectorError` whose message starts with `invalid annotation selector:`.
 */
export function compileAnnotationSelector(
  selector: AnnotationSelector | null | undefined
): AnnotationMatcher {
  if (selector === null || selector === undefined) return () => true
  return compileMapSelector(selector.matchAnnotations, selector.matchExpressions, ANNOTATIONS)
}
