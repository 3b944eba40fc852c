/**
 * An undici connector that reaches `https:` targets through an HTTP proxy's CONNECT tunnel, with
 * the TLS handshake to the target made over the tunnel by the wrapped connector (so its CA,
 * client certificate and server name apply to the target, as Go's transport does).
 *
 * @module
 */
import type { Socket } from 'node:net'
import type { buildConnector } from 'undici'

/** An undici connector function. */
export type Connector = buildConnector.connector

/** Largest CONNECT response head accepted before the proxy is declared broken. */
const MAX_HEAD_BYTES = 16 * 1024

/** Default time a proxy has to answer a CONNECT (as undici's own connect timeout). */
const DEFAULT_TUNNEL_TIMEOUT_MS = 10_000

/** The `Proxy-Authorization` value of a proxy URL's user info, as Go derives it. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
  return `Basic ${Buffer.from(credentials).toString('base64')}`
}

/** A connection through a proxy failed: the proxy is unreachable or refused the tunnel. */
export class ProxyTunnelError extends Error {
  override readonly name = 'ProxyTunnelError'
  /** The network error code of the hop to the proxy, when that failed. */
  readonly code: string | undefined
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    const code = (options?.cause as { code?: unknown } | undefined)?.code
    this.code = typeof code === 'string' ? code : undefined
  }
}

/** A URL's port, or its scheme's default. */
export function portOf(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80'
}

/** A proxy URL without its credentials, for messages. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`
}

/**
 * Sends `CONNECT authority` on an open connection to a proxy and resolves once the proxy answers
 * 200; any bytes after the answer's head are put back for the TLS layer.
 */
export function openTunnel(
  socket: Socket,
  authority: string,
  proxy: URL,
  timeoutMs: number = DEFAULT_TUNNEL_TIMEOUT_MS
): Promise<void> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0)
    const done = (error?: Error): void => {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('error', onError)
      socket.off('close', onClose)
      if (error === undefined) resolve()
      else reject(error)
    }
    const fail = (reason: string): void => {
      done(new ProxyTunnelError(`proxy ${describeProxy(proxy)}: CONNECT ${authority}: ${reason}`))
    }
    const onError = (error: Error): void => {
      fail(error.message)
    }
    const onClose = (): void => {
      fail('the proxy closed the connection before answering')
    }
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) fail('the proxy sent an oversized answer')
        return
      }
      socket.pause()
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1')
      const rest = head.subarray(end + 4)
      if (rest.length > 0) socket.unshift(rest)
      const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine)
      // Go's transport accepts exactly 200 to a CONNECT.
      if (status?.[1] !== '200') {
        fail(
          status === null ? `malformed answer ${JSON.stringify(statusLine)}` : statusLine.slice(9)
        )
        return
      }
      done()
    }
    const timer = setTimeout(() => {
      fail(`no answer within ${timeoutMs} ms`)
    }, timeoutMs)
    socket.on('data', onData)
    socket.once('error', onError)
    socket.once('close', onClose)
    const auth = proxyAuthorization(proxy)
    socket.write(
      `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n` +
        (auth === undefined ? '' : `Proxy-Authorization: ${auth}\r\n`) +
        '\r\n'
    )
  })
}

/**
 * Wraps `connect` so that an `https:` target for which `proxyFor` names a proxy is reached
 * through that proxy's CONNECT tunnel; other targets are connected by `connect` directly.
 *
 * @remarks
 * The hop to the proxy goes through `connect` too (TLS for an `https:` proxy, with the same
 * settings, as Go's transport uses its TLS config for both), so a connector that counts or traces
 * connections sees the proxy's. `http:` targets are never tunnelled here: they are sent to the
 * proxy in absolute form (see `proxyDispatcher`), as Go does.
 */
export function tunnelingConnector(
  connect: Connector,
  proxyFor: (target: URL) => URL | undefined
): Connector {
  return (target, callback) => {
    if (target.protocol !== 'https:' || target.httpSocket !== undefined) {
      connect(target, callback)
      return
    }
    const url = new URL(`${target.protocol}//${target.host ?? target.hostname}`)
    if (target.port !== '') url.port = target.port
    let proxy: URL | undefined
    try {
      proxy = proxyFor(url)
    } catch (error) {
      callback(error as Error, null)
      return
    }
    if (proxy === undefined) {
      connect(target, callback)
      return
    }
    const via = proxy
    const hop = {
      hostname: via.hostname,
      host: via.host,
      protocol: via.protocol,
      port: portOf(via),
    }
    connect(hop, (error, socket) => {
      if (error !== null) {
        const message = `proxy ${describeProxy(via)}: ${error.message}`
        callback(new ProxyTunnelError(message, { cause: error }), null)
        return
      }
      openTunnel(socket, `${url.hostname}:${portOf(url)}`, via).then(
        () => {
          connect({ ...target, httpSocket: socket }, callback)
        },
        (tunnelError: unknown) => {
          socket.destroy()
          callback(tunnelError as Error, null)
        }
      )
    })
  }
}
