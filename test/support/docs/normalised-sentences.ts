// A sentence reduced to what it says: the set of its content words, lower-case, without
// punctuation, Markdown or stop words, numbers kept ("about 16 min" and "about 20 minutes" must
// stay apart). Two wordings of one statement share most of these words.

/** English function words, which say nothing about what a sentence states. */
const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before
  being below between both but by can could did do does doing down during each either else
  every few for from further had has have having here how however i if in into is it its itself
  just may might more most much must my no nor not now of off on once one only or other our ours
  out over own same shall should so some such than that the their theirs them then there these
  they this those through thus to too under until up upon very was we were what when where
  whether which while who whom whose why will with within without would yet you your`.split(/\s+/)
)

/** A sentence's words as the similarity check compares them. */
export interface NormalisedSentence {
  /** The sentence as written, for messages. */
  readonly text: string
  readonly words: ReadonlySet<string>
}

/** The content words of a piece of prose: Markdown links read as their text, code as words. */
export function contentWords(text: string): string[] {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/(\d),(\d{3})/g, '$1$2')
    .split(/[^a-z0-9.]+/)
    .map((word) => word.replace(/^\.+|\.+$/g, ''))
    .filter((word) => word !== '' && !STOP_WORDS.has(word))
}

/**
 * The sentences of a prose paragraph: split after `.`, `!`, `?` or `;` followed by a space and
 * not ending a common abbreviation (`e.g.`, `i.e.`).
 */
export function sentencesOf(paragraph: string): string[] {
  return paragraph
    .split(/(?<!\b(?:e\.g|i\.e|etc|vs)\.)(?<=[.!?;])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** The paragraph's sentences, normalised. */
export function normalisedSentences(paragraph: string): NormalisedSentence[] {
  return sentencesOf(paragraph).map((text) => ({ text, words: new Set(contentWords(text)) }))
}

/** Jaccard similarity of two sentences' word sets: shared words over all words of either. */
export function sentenceSimilarity(a: NormalisedSentence, b: NormalisedSentence): number {
  let shared = 0
  for (const word of a.words) if (b.words.has(word)) shared++
  const all = a.words.size + b.words.size - shared
  return all === 0 ? 0 : shared / all
}
