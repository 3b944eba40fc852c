import { readFile as readFileFromDisk } from 'node:fs/promises'

import type { CredentialSource, RequestCredential } from './cluster-config.js'

/** How long a token read from a file is trusted before the file is read again, as in client-go. */
export const TOKEN_FILE_REFRESH_MS = 60_000

/** Injectable clock and file reader of {@link TokenFileCredentials}. */
export interface TokenFileCredentialsOptions {
  /** Current time in milliseconds; `Date.now` by default. */
  readonly now?: () => number
  /** Reads the token file as UTF-8; `fs.readFile` by default. */
  readonly readFile?: (filePath: string) => Promise<string>
  /** Overrides {@link TOKEN_FILE_REFRESH_MS}. */
  readonly refreshMs?: number
}

/**
 * Supplies a bearer token read from a file and re-read as the file rotates.
 *
 * @remarks
 * Projected service-account tokens are rewritten by the kubelet well before they expire, so the
 * file is re-read once it is older than a minute and right after a 401. When a timed re-read
 * fails the previous token is kept, since it is still likely valid (client-go does the same); after
 * a 401 there is no such token and the read error is thrown.
 */
export class TokenFileCredentials implements CredentialSource {
  readonly #path: string
  readonly #now: () => number
  readonly #readFile: (filePath: string) => Promise<string>
  readonly #refreshMs: number
  #credential: RequestCredential | undefined
  #readAt = 0
  #reading: Promise<RequestCredential> | undefined

  /** Creates a source for the token at `path`; nothing is read until the first request. */
  constructor(path: string, options: TokenFileCredentialsOptions = {}) {
    this.#path = path
    this.#now = options.now ?? Date.now
    this.#readFile = options.readFile ?? ((file) => readFileFromDisk(file, 'utf8'))
    this.#refreshMs = options.refreshMs ?? TOKEN_FILE_REFRESH_MS
  }

  /** Returns the cached token, re-reading the file when it is older than the refresh interval. */
  current(): Promise<RequestCredential> {
    if (this.#credential !== undefined && this.#now() - this.#readAt < this.#refreshMs) {
      return Promise.resolve(this.#credential)
    }
    // One read serves every request that arrives while it is in flight.
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined
    })
    return this.#reading
  }

  /** Forgets the token so the next request re-reads the file. */
  invalidate(): void {
    this.#credential = undefined
  }

  async #read(): Promise<RequestCredential> {
    let token: string
    try {
      token = (await this.#readFile(this.#path)).trim()
      if (token === '') throw new Error('the file is empty')
    } catch (error) {
      if (this.#credential !== undefined) return this.#credential
      const reason = error instanceof Error ? error.message : 'unknown error'
      throw new Error(`cannot read bearer token file ${this.#path}: ${reason}`, { cause: error })
    }
    this.#credential = { authorization: `Bearer ${token}` }
    this.#readAt = this.#now()
    return this.#credential
  }
}
