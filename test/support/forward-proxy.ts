/**
 * A forward HTTP proxy on 127.0.0.1 for tests: CONNECT tunnels and absolute-form plain-HTTP
 * requests, each counted with its target, optionally behind Basic credentials.
 *
 * @remarks
 * Every connection it makes goes to 127.0.0.1: a target name is looked up in `hosts` (names a
 * test invents, so a request that bypassed the proxy could not have reached its target), and an
 * address target must be loopback. Anything else is refused with 403, so a test never sends
 * traffic off the machine.
 *
 * @module
 */
import { createServer, request as httpRequest } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { connect as netConnect, isIP } from 'node:net'
import type { AddressInfo, Socket } from 'node:net'

/** One request the proxy handled. */
export interface ProxiedRequest {
  readonly kind: 'connect' | 'http'
  /** `host:port` of a CONNECT, or the absolute URL of a plain request. */
  readonly target: string
  /** The `Proxy-Authorization` header as received. */
  readonly authorization: string | undefined
}

/** A running test proxy. */
export interface ForwardProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  readonly requests: ProxiedRequest[]
  /** How many CONNECTs arrived (authorized ones; refused targets included). */
  connects(): number
  /** How many absolute-form requests arrived (authorized ones; refused targets included). */
  plainRequests(): number
  close(): Promise<void>
}

/** Options of {@link startForwardProxy}. */
export interface ForwardProxyOptions {
  /** Names the proxy resolves to 127.0.0.1 (lower case). */
  readonly hosts?: readonly string[]
  /** A `Proxy-Authorization` value required of every request; 407 without it. */
  readonly requireAuthorization?: string
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  return bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'))
}

/** The loopback address to dial for a target host, or undefined to refuse it. */
function dialAddress(host: string, hosts: ReadonlySet<string>): string | undefined {
  if (hosts.has(host.toLowerCase()) || host === 'localhost') return '127.0.0.1'
  return isLoopback(host) ? host.replace(/^\[|\]$/g, '') : undefined
}

/** Starts a proxy on an ephemeral loopback port. */
export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const hosts = new Set((options.hosts ?? []).map((name) => name.toLowerCase()))
  const requests: ProxiedRequest[] = []
  const sockets = new Set<Socket>()
  const authorized = (req: IncomingMessage): boolean =>
    options.requireAuthorization === undefined ||
    req.headers['proxy-authorization'] === options.requireAuthorization

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? ''
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end()
      return
    }
    let url: URL
    try {
      url = new URL(target)
    } catch {
      res.writeHead(400).end('not an absolute-form request')
      return
    }
    // Recorded before the checks, so a request the proxy refuses still shows it was attempted.
    requests.push({ kind: 'http', target, authorization: req.headers['proxy-authorization'] })
    const address = dialAddress(url.hostname, hosts)
    if (address === undefined) {
      res.writeHead(403).end(`refusing ${url.hostname}`)
      return
    }
    const headers = { ...req.headers }
    delete headers['proxy-authorization']
    const upstream = httpRequest(
      {
        host: address,
        port: url.port || 80,
        method: req.method,
        path: url.pathname + url.search,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    upstream.on('error', (error) => {
      res.writeHead(502).end(error.message)
    })
    req.pipe(upstream)
  })

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => undefined)
    const authority = req.url ?? ''
    if (!authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')
      return
    }
    requests.push({
      kind: 'connect',
      target: authority,
      authorization: req.headers['proxy-authorization'],
    })
    const colon = authority.lastIndexOf(':')
    const address = dialAddress(authority.slice(0, colon), hosts)
    if (address === undefined) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
      return
    }
    const upstream = netConnect(Number(authority.slice(colon + 1)), address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.on('close', () => upstream.destroy())
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connects: () => requests.filter((r) => r.kind === 'connect').length,
    plainRequests: () => requests.filter((r) => r.kind === 'http').length,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}
