/**
 * A hook's error for a person: its message and the frames of the stack that are in the project's
 * own files (not node_modules, not Node's internals), as paths relative to the project.
 *
 * @module
 */
import { fileURLToPath } from 'node:url'
import { isAbsolute, relative } from 'node:path'

function projectFrame(line: string, projectDir: string): string | undefined {
  const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/.exec(line.trim())
  if (match === null) return undefined
  const [, location = '', row, column] = match
  // tsx namespaces add a query to the URL of every module they load.
  const path = location.startsWith('file://')
    ? fileURLToPath(location.split('?')[0] ?? location)
    : location
  const shown = relative(projectDir, path)
  if (shown.startsWith('..') || isAbsolute(shown) || shown.split('/').includes('node_modules')) {
    return undefined
  }
  const name = /^\s*at (.+?) \(/.exec(line)?.[1]
  return `at ${shown}:${row ?? '?'}:${column ?? '?'}${name === undefined || name === '<anonymous>' ? '' : ` (${name})`}`
}

/** The message and the project-local frames of an error, one per line. */
export function describeHookError(error: unknown, projectDir: string): string[] {
  if (!(error instanceof Error)) return [String(error)]
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map((line) => projectFrame(line, projectDir))
    .filter((frame): frame is string => frame !== undefined)
  // Compile errors name the file and line in the message itself, over several lines.
  const message = `${error.name}: ${error.message}`.split('\n').filter((line) => line.trim() !== '')
  return [...message, ...frames.map((frame) => `    ${frame}`)]
}
