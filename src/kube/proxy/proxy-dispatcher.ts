/**
 * An undici dispatcher that sends each request the way Go's `http.Transport` does with a proxy:
 * `https:` targets through a CONNECT tunnel, `http:` targets to the proxy in absolute form
 * (`POST http://host/path`), and targets the resolver exempts directly.
 *
 * @module
 */
import type { Agent as AgentType, Dispatcher } from 'undici'
import { Agent } from '../undici-core.js'
import type { ProxyResolver } from './proxy-resolver.js'
import { proxyAuthorization, tunnelingConnector } from './proxy-tunnel-connector.js'
import type { Connector } from './proxy-tunnel-connector.js'

/** Options of {@link proxyDispatcher}. */
export interface ProxyDispatcherOptions {
  /** Connects to targets and proxies (TLS settings, tracing, counting). */
  readonly connect: Connector
  /** Decides the proxy of each request. */
  readonly resolve: ProxyResolver
  /** Pool settings of the underlying agent. */
  readonly agent?: Omit<AgentType.Options, 'connect'>
}

type HeaderRecord = Record<string, string | string[]>

function headerRecord(headers: Dispatcher.DispatchOptions['headers']): HeaderRecord {
  const record: HeaderRecord = {}
  if (headers === null || headers === undefined) return record
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) record[headers[i] ?? ''] = headers[i + 1] ?? ''
    return record
  }
  const entries: Iterable<[string, string | string[] | undefined]> =
    Symbol.iterator in headers
      ? (headers as Iterable<[string, string | string[] | undefined]>)
      : Object.entries(headers as Record<string, string | string[] | undefined>)
  for (const [name, value] of entries) if (value !== undefined) record[name] = value
  return record
}

/** The request rewritten for a proxy: absolute-form target, the target's Host, credentials. */
function absoluteForm(
  opts: Dispatcher.DispatchOptions,
  target: URL,
  proxy: URL
): Dispatcher.DispatchOptions {
  // The target's Host replaces any the caller set (whatever its case).
  const headers = Object.fromEntries(
    Object.entries(headerRecord(opts.headers)).filter(([name]) => name.toLowerCase() !== 'host')
  )
  headers['host'] = target.host
  const auth = proxyAuthorization(proxy)
  if (auth !== undefined) headers['proxy-authorization'] = auth
  return { ...opts, origin: proxy.origin, path: `${target.origin}${opts.path}`, headers }
}

/**
 * A pooled dispatcher that honours `resolve` for every request (see the module notes).
 *
 * @remarks
 * One agent holds every pool: direct targets and proxies by their own origin, tunnelled targets
 * by theirs (each tunnel is a kept-alive connection of its own, as in Go). An origin that serves
 * as a proxy for absolute-form requests is never itself tunnelled.
 */
export function proxyDispatcher(options: ProxyDispatcherOptions): Dispatcher {
  const proxyOrigins = new Set<string>()
  const agent = new Agent({
    ...options.agent,
    connect: tunnelingConnector(options.connect, (target) =>
      proxyOrigins.has(target.origin) ? undefined : options.resolve(target)
    ),
  })
  return agent.compose((dispatch) => (opts, handler) => {
    const target = new URL(String(opts.origin))
    const proxy = target.protocol === 'http:' ? options.resolve(target) : undefined
    if (proxy === undefined) return dispatch(opts, handler)
    proxyOrigins.add(proxy.origin)
    return dispatch(absoluteForm(opts, target, proxy), handler)
  })
}
