/**
 * The parts of undici the engine uses (`Agent`, `buildConnector`, `request`), loaded from its
 * library files instead of its index.
 *
 * @remarks
 * undici's index also loads fetch, WebSocket, EventSource, the cache stores (SQLite included),
 * the mock agents and every interceptor: about 9 MiB of resident memory in a process that uses
 * none of them. The pieces below are the same modules the index loads, so an object from one
 * is an object of the other (a test that imports `undici` itself shares classes with the engine).
 * The types still come from the package's own declarations.
 *
 * @module
 */
import { createRequire } from 'node:module'
import type * as Undici from 'undici'

const load = createRequire(import.meta.url)

// The index adds the request/stream/pipeline methods to every dispatcher this way; without it an
// Agent has no `request`. Assigning the same functions again (when the index is loaded too) is
// harmless.
const api = load('undici/lib/api/index.js') as object
const dispatcherClass = load('undici/lib/dispatcher/dispatcher.js') as { prototype: object }
Object.assign(dispatcherClass.prototype, api)

const global = load('undici/lib/global.js') as { getGlobalDispatcher(): Undici.Dispatcher }

/** undici's connection pool per origin (the class its index exports). */
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent
/** An instance of {@link Agent}. */
export type Agent = Undici.Agent

/** undici's TLS/TCP connector factory (the function its index exports). */
export const buildConnector = load('undici/lib/core/connect.js') as typeof Undici.buildConnector
/** Options of {@link buildConnector}. */
export type BuildConnectorOptions = Undici.buildConnector.BuildOptions

/** undici's global dispatcher (what its top-level calls send through when given none). */
export function globalDispatcher(): Undici.Dispatcher {
  return global.getGlobalDispatcher()
}

/** Options of {@link request}: undici's, with the dispatcher to send through. */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & {
  readonly dispatcher?: Undici.Dispatcher
}

/**
 * Sends one request to an absolute URL, like undici's top-level `request`: through the given
 * dispatcher, or undici's global one.
 */
export function request(
  url: string | URL,
  options: RequestOptions
): Promise<Undici.Dispatcher.ResponseData> {
  const target = typeof url === 'string' ? new URL(url) : url
  const { dispatcher = global.getGlobalDispatcher(), ...rest } = options
  return dispatcher.request({
    ...rest,
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
  })
}
