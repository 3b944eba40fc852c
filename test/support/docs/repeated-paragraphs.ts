// Finds a thing said twice in the docs, also in other words: two paragraphs whose normalised
// sentences mostly match, or one paragraph that says two of its sentences again.
import { proseParagraphs } from './markdown-prose.js'
import { normalisedSentences, sentenceSimilarity } from './normalised-sentences.js'
import type { NormalisedSentence } from './normalised-sentences.js'

/** A Markdown document by its path. */
export interface Doc {
  readonly file: string
  readonly text: string
}

/**
 * The thresholds. Chosen on this repository's docs: the README's doubled install paragraph
 * (0.6 to 1.0 per sentence) is caught, while sentences that share a subject but state different
 * things (a flag's name and its default, two runs of one benchmark) stay under 0.6.
 */
export interface RepeatThresholds {
  /** Two sentences say the same when this share of their content words is common to both. */
  readonly sentence: number
  /** Two paragraphs repeat each other when this share of the shorter one's sentences match. */
  readonly paragraph: number
  /** ...and the matched sentences hold at least this many content words (no short echoes). */
  readonly minWords: number
}

/** The thresholds the docs test applies. */
export const REPEAT_THRESHOLDS: RepeatThresholds = { sentence: 0.5, paragraph: 0.5, minWords: 10 }

interface Located {
  readonly file: string
  readonly line: number
  readonly sentences: readonly NormalisedSentence[]
}

function locate(docs: readonly Doc[]): Located[] {
  return docs.flatMap((doc) =>
    proseParagraphs(doc.text).map((p) => ({
      file: doc.file,
      line: p.line,
      sentences: normalisedSentences(p.text).filter((s) => s.words.size >= 3),
    }))
  )
}

/** The sentences of `a` that match some sentence of `b` (another sentence when `a` is `b`). */
function matched(a: Located, b: Located, threshold: number): NormalisedSentence[] {
  return a.sentences.filter((s, i) =>
    b.sentences.some(
      (t, j) =>
        (a !== b || (j < i && !matchesEarlier(a, j, threshold))) &&
        sentenceSimilarity(s, t) >= threshold
    )
  )
}

/** Whether sentence `j` of `p` is itself a repeat of an earlier one (counted once, not twice). */
function matchesEarlier(p: Located, j: number, threshold: number): boolean {
  const s = p.sentences[j]
  return (
    s !== undefined && p.sentences.slice(0, j).some((t) => sentenceSimilarity(s, t) >= threshold)
  )
}

function wordCount(sentences: readonly NormalisedSentence[]): number {
  return sentences.reduce((sum, s) => sum + s.words.size, 0)
}

function where(p: Located): string {
  return `${p.file}:${String(p.line)}`
}

/** Whether `a` and `b` (two paragraphs) mostly say the same. */
function repeats(a: Located, b: Located, t: RepeatThresholds): boolean {
  const [short, long] = a.sentences.length <= b.sentences.length ? [a, b] : [b, a]
  if (short.sentences.length === 0) return false
  const same = matched(short, long, t.sentence)
  return same.length / short.sentences.length >= t.paragraph && wordCount(same) >= t.minWords
}

/**
 * Every repeat in `docs`, one line each: a pair of paragraphs that mostly match, or a paragraph
 * in which two or more sentences say an earlier one of it again.
 */
export function repeatedParagraphs(
  docs: readonly Doc[],
  thresholds: RepeatThresholds = REPEAT_THRESHOLDS
): string[] {
  const paragraphs = locate(docs)
  const found: string[] = []
  paragraphs.forEach((a, i) => {
    const again = matched(a, a, thresholds.sentence)
    if (again.length >= 2 && wordCount(again) >= thresholds.minWords)
      found.push(
        `${where(a)} says again, in one paragraph: "${again[0]?.text.slice(0, 70) ?? ''}..."`
      )
    for (const b of paragraphs.slice(i + 1)) {
      if (repeats(a, b, thresholds))
        found.push(
          `${where(b)} repeats ${where(a)}: "${b.sentences[0]?.text.slice(0, 70) ?? ''}..."`
        )
    }
  })
  return found
}
