/**
 * A hook's error for a person: its message, the frames of the stack that are in the project's
 * own files (not node_modules, not Node's internals) as paths relative to the project, and the
 * source lines of the first of them with a caret under the column that threw.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isAbsolute, relative } from 'node:path'

/** How many lines before the one that threw the excerpt shows. */
const LINES_BEFORE = 2

/** A stack frame in the project's own files. */
interface ProjectFrame {
  /** `at src/hook.ts:15:31 (sync)`. */
  readonly text: string
  readonly path: string
  readonly row: number
  readonly column: number
}

function projectFrame(line: string, projectDir: string): ProjectFrame | undefined {
  const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/.exec(line.trim())
  if (match === null) return undefined
  const [, location = '', row = '0', column = '0'] = match
  // tsx namespaces add a query to the URL of every module they load.
  const path = location.startsWith('file://')
    ? fileURLToPath(location.split('?')[0] ?? location)
    : location
  const shown = relative(projectDir, path)
  if (shown.startsWith('..') || isAbsolute(shown) || shown.split('/').includes('node_modules')) {
    return undefined
  }
  const name = /^\s*at (.+?) \(/.exec(line)?.[1]
  const caller = name === undefined || name === '<anonymous>' ? '' : ` (${name})`
  return {
    text: `at ${shown}:${row}:${column}${caller}`,
    path,
    row: Number(row),
    column: Number(column),
  }
}

/**
 * The lines of `frame`'s file up to the one that threw, numbered, with a caret under its column;
 * none when the file cannot be read (the frames still say where).
 */
export function sourceExcerpt(frame: Pick<ProjectFrame, 'path' | 'row' | 'column'>): string[] {
  let text: string
  try {
    text = readFileSync(frame.path, 'utf8')
  } catch {
    return []
  }
  const lines = text.split('\n')
  if (frame.row < 1 || frame.row > lines.length) return []
  const first = Math.max(1, frame.row - LINES_BEFORE)
  const width = String(frame.row).length
  const numbered = lines.slice(first - 1, frame.row).map((source, index) => {
    const number = String(first + index).padStart(width)
    return `${first + index === frame.row ? '>' : ' '} ${number} | ${source.trimEnd()}`
  })
  const caret = `  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, frame.column - 1))}^`
  return [...numbered, caret]
}

/**
 * The message and the project-local frames of an error, one per line, then the source lines of
 * the first frame with a caret.
 */
export function describeHookError(error: unknown, projectDir: string): string[] {
  if (!(error instanceof Error)) return [String(error)]
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map((line) => projectFrame(line, projectDir))
    .filter((frame): frame is ProjectFrame => frame !== undefined)
  // Compile errors name the file and line in the message itself, over several lines.
  const message = `${error.name}: ${error.message}`.split('\n').filter((line) => line.trim() !== '')
  const [top] = frames
  const excerpt = top === undefined ? [] : sourceExcerpt(top)
  return [
    ...message,
    ...frames.map((frame) => `    ${frame.text}`),
    ...excerpt.map((line) => `    ${line}`),
  ]
}
