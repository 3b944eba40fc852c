/**
 * A byte-stream forwarder between a TCP port and a unix socket, the only way the host reaches the
 * cluster: the host side listens on 127.0.0.1 and connects to a unix socket in the cluster's
 * directory; the side inside the network namespace listens on that socket and connects to the
 * API server. A unix socket is reached by its path, which both namespaces share, so no address of
 * the namespace is ever routed from the host.
 *
 * @module
 */
import { createServer, connect } from 'node:net'
import type { Server, Socket } from 'node:net'
import { rmSync } from 'node:fs'

/** One end: a TCP address or a unix socket path. */
export type Endpoint =
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'unix'; readonly path: string }

/**
 * Parses `tcp:HOST:PORT` or `unix:PATH`.
 *
 * @throws Error naming the accepted forms.
 */
export function parseEndpoint(text: string): Endpoint {
  if (text.startsWith('unix:') && text.length > 5) return { kind: 'unix', path: text.slice(5) }
  const match = /^tcp:([^:]+):(\d+)$/.exec(text)
  if (match !== null) return { kind: 'tcp', host: match[1] ?? '', port: Number(match[2]) }
  throw new Error(`endpoint "${text}" is neither tcp:HOST:PORT nor unix:PATH`)
}

/** Formats an endpoint the way {@link parseEndpoint} reads it. */
export function formatEndpoint(endpoint: Endpoint): string {
  return endpoint.kind === 'unix'
    ? `unix:${endpoint.path}`
    : `tcp:${endpoint.host}:${endpoint.port}`
}

function dial(endpoint: Endpoint): Socket {
  return endpoint.kind === 'unix' ? connect(endpoint.path) : connect(endpoint.port, endpoint.host)
}

/**
 * Listens on `from` and pipes each connection to a new connection to `to`. A side that ends its
 * writing (half-close) is passed on as such; one that fails or closes closes both. Resolves once
 * listening.
 */
export async function startForwarder(from: Endpoint, to: Endpoint): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = dial(to)
    const close = (): void => {
      inbound.destroy()
      outbound.destroy()
    }
    inbound.on('error', close).on('close', close)
    outbound.on('error', close).on('close', close)
    inbound.pipe(outbound)
    outbound.pipe(inbound)
  })
  // A socket file left by a killed forwarder would make listen fail with EADDRINUSE.
  if (from.kind === 'unix') rmSync(from.path, { force: true })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    const ready = (): void => {
      server.off('error', reject)
      resolve()
    }
    if (from.kind === 'unix') server.listen(from.path, ready)
    else server.listen(from.port, from.host, ready)
  })
  return server
}
