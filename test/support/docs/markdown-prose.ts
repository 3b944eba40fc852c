// Splits a Markdown document into what the docs checks read: prose paragraphs and inline code
// spans, each with its line, fenced code blocks left out (their text is commands and output).

/** A paragraph of prose (or one list item), whitespace folded, with its first line (1-based). */
export interface ProseParagraph {
  readonly text: string
  readonly line: number
}

/** One `inline code` span outside fenced blocks, with its line (1-based). */
export interface CodeSpan {
  readonly code: string
  readonly line: number
}

/** The document's lines with every fenced code block's lines blanked, so line numbers hold. */
function withoutFences(text: string): string[] {
  let fenced = false
  return text.split('\n').map((line) => {
    const fence = /^\s*(```|~~~)/.test(line)
    if (fence) fenced = !fenced
    return fence || fenced ? '' : line
  })
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+\.)\s+/

/**
 * The prose paragraphs: blocks between blank lines, and each list item on its own. Headings,
 * tables, HTML comments and fenced code are not prose and are left out.
 */
export function proseParagraphs(text: string): ProseParagraph[] {
  const paragraphs: ProseParagraph[] = []
  let current: string[] = []
  let start = 0
  const flush = (): void => {
    const joined = current.join(' ').split(/\s+/).join(' ').trim()
    if (joined !== '') paragraphs.push({ text: joined, line: start + 1 })
    current = []
  }
  withoutFences(text).forEach((line, index) => {
    const skipped = /^\s*(#|\||<!--)/.test(line)
    if (line.trim() === '' || skipped || LIST_ITEM.test(line)) flush()
    if (line.trim() === '' || skipped) return
    if (current.length === 0) start = index
    current.push(line.replace(LIST_ITEM, ''))
  })
  flush()
  return paragraphs
}

/**
 * Every inline code span outside fenced blocks, table cells included. A span may wrap onto the
 * next line of its paragraph, never past a blank line; its line is the one it starts on.
 */
export function codeSpans(text: string): CodeSpan[] {
  const lines = withoutFences(text)
  const spans: CodeSpan[] = []
  const joined = lines.join('\n')
  let line = 1
  let counted = 0
  for (const match of joined.matchAll(/(`+)((?:(?!\n\s*\n)[^`])+?)\1/g)) {
    for (; counted < match.index; counted++) if (joined[counted] === '\n') line++
    spans.push({ code: (match[2] ?? '').split(/\s+/).join(' ').trim(), line })
  }
  return spans
}
