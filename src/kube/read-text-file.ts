/**
 * Reading the text files a configuration names (kubeconfigs, certificates, tokens), injectable for
 * tests, and the file-system errors worded for a person.
 *
 * @module
 */
import { readFile as readFileFromDisk } from 'node:fs/promises'

/** Reads a UTF-8 text file; injectable so tests need not touch the real file system. */
export type ReadTextFile = (filePath: string) => Promise<string>

/** Reads a file, returning undefined when it (or a parent directory) does not exist. */
export async function readOptional(
  file: string,
  readFile: ReadTextFile
): Promise<string | undefined> {
  try {
    return await readFile(file)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/** Reads a file from disk as UTF-8: the default {@link ReadTextFile}. */
export function readUtf8(file: string): Promise<string> {
  return readFileFromDisk(file, 'utf8')
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}

/** Shortens a file system error to its code and meaning, without repeating the path. */
export function describeFsError(error: unknown): string {
  const code = errorCode(error)
  const meanings: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'a parent is not a directory',
  }
  const meaning = code === undefined ? undefined : meanings[code]
  if (code !== undefined && meaning !== undefined) return `${code} (${meaning})`
  return error instanceof Error ? error.message : 'unknown error'
}

/** An empty value read from a file or the environment, as unset. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value
}
