/**
 * The connector of a hook's HTTP agent: it reports the DNS and TLS phases of each new connection
 * (upstream's `dns_duration` and `tls_duration` hook metrics come from Go's `httptrace`), and it
 * can send a host's connections to another address (`--hook-address`, for engines run outside
 * the cluster).
 *
 * @module
 */
import { lookup as dnsLookup } from 'node:dns'
import type { LookupAddress } from 'node:dns'
import { Socket, isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import type { buildConnector as BuildConnector } from 'undici'
// The library file, not undici's index: the index loads fetch, WebSocket and more (memory).
import { buildConnector } from '../../kube/undici-core.js'
import type { ConnectPhase } from '../metrics/hook-metrics.js'

/** Where connections for one `host:port` go instead. */
export interface HookAddress {
  readonly host: string
  readonly port: number
}

/**
 * Overrides of where hook connections go, keyed by `host:port` as in the hook URL (lower case,
 * the scheme's default port spelled out).
 */
export type HookAddressMap = ReadonlyMap<string, HookAddress>

/** Options of {@link tracedConnector}. */
export interface TracedConnectorOptions {
  /** TLS settings (CA, client certificate, minimum version) for https hooks. */
  readonly tls?: BuildConnector.BuildOptions
  /** Called as each phase of a new connection happens. */
  readonly onPhase?: (phase: ConnectPhase) => void
  readonly addresses?: HookAddressMap
}

/** The {@link HookAddressMap} key of a URL's host and port. */
export function hookAddressKey(hostname: string, port: string | number, protocol: string): string {
  const effective = port === '' || port === 0 ? (protocol === 'https:' ? 443 : 80) : Number(port)
  return `${hostname.toLowerCase()}:${effective}`
}

/**
 * A `lookup` for net/tls connect options that reports `dns_start` and `dns_done` around
 * `dns.lookup`; Node calls it only for names, never for IP literals, so, as with Go's httptrace,
 * a URL with an address observes no DNS phase.
 */
export function tracedLookup(onPhase: (phase: ConnectPhase) => void): LookupFunction {
  return (hostname, options, callback) => {
    onPhase('dns_start')
    // `options.all` decides the callback's shape; pass both straight through.
    const done = (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family: number
    ): void => {
      onPhase('dns_done')
      callback(error, address, family)
    }
    dnsLookup(hostname, options, done)
  }
}

/**
 * Builds an undici connector (undici's own, wrapped) that traces and redirects connections.
 *
 * @remarks
 * TLS is timed from the socket's TCP `connect` (the handshake starts then) to `secureConnect`,
 * only for https, as Go reports TLS phases only for TLS connections. A redirected connection
 * still sends and verifies the URL's host name (SNI and certificate check), so a certificate
 * issued for the in-cluster name works against a local address.
 */
export function tracedConnector(options: TracedConnectorOptions): BuildConnector.connector {
  const onPhase = options.onPhase
  const connect = buildConnector({
    ...options.tls,
    ...(onPhase === undefined ? {} : { lookup: tracedLookup(onPhase) }),
  })
  return (target, callback) => {
    const redirect = options.addresses?.get(
      hookAddressKey(target.hostname, target.port, target.protocol)
    )
    const dial =
      redirect === undefined
        ? target
        : {
            ...target,
            hostname: redirect.host,
            port: String(redirect.port),
            // undici would otherwise take the name for SNI and verification from the new host.
            ...(isIP(target.hostname) === 0 && (target.servername ?? '') === ''
              ? { servername: target.hostname }
              : {}),
          }
    // undici's connector returns the socket it made, though its type says void.
    const socket: unknown = (connect as (...args: unknown[]) => unknown)(dial, callback)
    if (onPhase !== undefined && target.protocol === 'https:' && socket instanceof Socket) {
      // Over a proxy's tunnel the TCP connection exists already: the handshake starts now.
      if (target.httpSocket !== undefined) onPhase('tls_handshake_start')
      else
        socket.once('connect', () => {
          onPhase('tls_handshake_start')
        })
      socket.once('secureConnect', () => {
        onPhase('tls_handshake_done')
      })
    }
  }
}

/**
 * Parses one `--hook-address` value, `HOST:PORT=ADDRESS:PORT`, into its map entry.
 *
 * @throws Error naming the expected form when `text` is not one.
 */
export function parseHookAddress(text: string): [string, HookAddress] {
  const match = /^([^=\s:]+):(\d+)=(?:\[([^\]]+)\]|([^=\s:]+)):(\d+)$/.exec(text.trim())
  const ports = match === null ? [] : [Number(match[2]), Number(match[5])]
  if (match === null || ports.some((port) => port < 1 || port > 65535)) {
    throw new Error(`"${text}" is not HOST:PORT=ADDRESS:PORT, e.g. hooks.default:80=127.0.0.1:8080`)
  }
  const host = match[3] ?? match[4] ?? ''
  return [`${(match[1] ?? '').toLowerCase()}:${ports[0]}`, { host, port: ports[1] ?? 0 }]
}
