/**
 * Error injection for the in-memory API server: the next calls matching a pattern fail with a
 * given error, as many times as asked, before any effect.
 *
 * @module
 */

/** A call the fake serves, for error injection. */
export type FakeMethod = FakeWriteMethod | 'get' | 'list' | 'watch'

/** A call that writes, as recorded in `FakeCluster.writes`. */
export type FakeWriteMethod = 'create' | 'update' | 'updateStatus' | 'delete'

/** Which calls an injected error applies to; an absent field matches anything. */
export interface FakeCallMatch {
  readonly method: FakeMethod
  /** Plural resource name. */
  readonly resource?: string
  readonly name?: string
  readonly namespace?: string
}

/** An injected error and how many more calls it fails. */
interface Injection {
  readonly match: FakeCallMatch
  readonly error: Error
  remaining: number
}

/** The errors waiting for the calls they match, first injected first served. */
export class FakeInjections {
  readonly #pending: Injection[] = []

  /** Makes the next `times` calls matching `match` fail with `error`. */
  add(match: FakeCallMatch, error: Error, times: number): void {
    this.#pending.push({ match, error, remaining: times })
  }

  /** Throws the error injected for `call`, if any, counting it off. */
  throwIfMatched(call: {
    method: FakeMethod
    resource: string
    name?: string
    namespace: string | undefined
  }): void {
    const index = this.#pending.findIndex(
      ({ match }) =>
        match.method === call.method &&
        (match.resource === undefined || match.resource === call.resource) &&
        (match.name === undefined || match.name === call.name) &&
        (match.namespace === undefined || match.namespace === call.namespace)
    )
    const injection = this.#pending[index]
    if (injection === undefined) return
    if (--injection.remaining <= 0) this.#pending.splice(index, 1)
    throw injection.error
  }
}
