import type { CredentialSource, RequestCredential } from './cluster-config.js'

/**
 * Supplies a credential that never changes: a fixed bearer token, basic auth, or nothing.
 *
 * @remarks
 * {@link StaticCredentials.invalidate} does nothing: there is nothing to refresh, so a 401 with a
 * static credential is final and the transport surfaces it.
 */
export class StaticCredentials implements CredentialSource {
  readonly #credential: RequestCredential

  /** Wraps a ready-made credential. */
  constructor(credential: RequestCredential) {
    this.#credential = credential
  }

  /** Returns a source that sends no `Authorization` header (anonymous or client-certificate auth). */
  static none(): StaticCredentials {
    return new StaticCredentials({})
  }

  /** Returns a source that sends `Authorization: Bearer <token>`. */
  static bearer(token: string): StaticCredentials {
    return new StaticCredentials({ authorization: `Bearer ${token}` })
  }

  /** Returns a source that sends `Authorization: Basic` with the UTF-8 `username:password`. */
  static basic(username: string, password: string): StaticCredentials {
    const encoded = Buffer.from(`${username}:${password}`, 'utf8').toString('base64')
    return new StaticCredentials({ authorization: `Basic ${encoded}` })
  }

  /** Returns the fixed credential. */
  current(): Promise<RequestCredential> {
    return Promise.resolve(this.#credential)
  }

  /** Does nothing, since a fixed credential cannot be refreshed. */
  invalidate(): void {
    // Nothing cached beyond the credential itself.
  }
}
