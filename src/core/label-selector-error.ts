/**
 * Reports a label selector that Kubernetes would refuse: a bad operator, a missing or unexpected
 * value list, an invalid label key or value, or selector text that does not parse.
 *
 * @remarks
 * The message names the offending part (`matchExpressions[1]`, or the position in the text) and
 * says what a valid selector looks like there.
 */
export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError'
  /** The selector text, when the error came from parsing a string. */
  readonly selectorText: string | undefined

  /** Creates the error; `selectorText` is given for string-parse errors. */
  constructor(message: string, selectorText?: string) {
    super(message)
    this.selectorText = selectorText
  }
}
