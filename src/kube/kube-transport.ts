/**
 * The HTTP transport to one API server: a pooled keep-alive agent, credentials, timeouts and
 * typed errors.
 *
 * @remarks
 * **Guarantees**
 * - One undici Agent per transport, so sequential requests reuse one TLS connection instead of
 *   handshaking each time (the failure of `@kubernetes/client-node`, which creates an agent per
 *   request).
 * - Response bodies are returned as the server sent them (`JSON.parse` only): no field dropped, no
 *   timestamp turned into a Date.
 * - A 429 is retried after the server's `Retry-After` (bounded by `maxRetries`); a 401 drops the
 *   cached credential and is retried once, so rotated tokens and expired exec credentials recover.
 *
 * @module
 */
import { timeoutSignal } from '../core/timeout-signal.js'
import { abortableDelay } from './abortable-delay.js'
import { Agent, buildConnector } from './undici-core.js'
import type { BuildConnectorOptions } from './undici-core.js'
import type { Dispatcher } from 'undici'
import { bufferedExchange, streamedExchange } from './exchange.js'
import type { Answer, Exchange, KubeStream } from './exchange.js'
import { clientGoProxyResolver } from './proxy/proxy-resolver.js'
import type { ProxyResolver } from './proxy/proxy-resolver.js'
import { proxyDispatcher } from './proxy/proxy-dispatcher.js'
import type { ClusterConfig, CredentialSource, RequestCredential } from './cluster-config.js'
import { apiErrorFromResponse } from './api-error.js'
import { createCredentialSource } from './credential-source.js'
import type { ApiError } from './api-error.js'
import { ConnectionError, describeNetworkError, networkErrorCode } from './connection-error.js'

export type { KubeStream } from './exchange.js'

/** A query string value; `undefined` leaves the parameter out. */
export type QueryValue = string | number | boolean | undefined

/** One request to the API server. */
export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Absolute API path such as `/api/v1/namespaces`; joined to the server URL's own path. */
  readonly path: string
  readonly query?: Readonly<Record<string, QueryValue>>
  /** A JSON body; serialized with `JSON.stringify`. */
  readonly body?: unknown
  /** Content type of the body; `application/json` by default. */
  readonly contentType?: string
  readonly accept?: string
  readonly signal?: AbortSignal
  /** Per-request timeout; the transport default applies when absent. `0` disables it (watches). */
  readonly timeoutMs?: number
  /**
   * Told the byte length of a 2xx response body once it is read (JSON requests only; a stream's
   * reader counts its own chunks), for metrics of what a collection costs to receive.
   */
  readonly onResponseBytes?: (bytes: number) => void
}

/** What {@link KubeTransport.withLimiter} returns: JSON requests under their own budget. */
export interface LimitedTransport {
  requestJson<T = unknown>(req: KubeRequest): Promise<T>
}

/** Waits for a client-side rate limit before a request, returning how long it waited. */
export interface RequestLimiter {
  take(signal?: AbortSignal): Promise<number>
}

/** Observes every finished request, for metrics and logs. */
export interface RequestObserver {
  onRequest(info: {
    readonly method: string
    readonly path: string
    readonly statusCode: number | undefined
    readonly durationMs: number
    readonly throttledMs: number
  }): void
}

/** Options of {@link KubeTransport}. */
export interface KubeTransportOptions {
  /** Resolves the request credential; built from `config.auth` when absent. */
  readonly credentials?: CredentialSource
  /** Default per-request timeout (30 s). */
  readonly timeoutMs?: number
  /** How many times a 429 is retried after its `Retry-After` before the error surfaces (10, as client-go). */
  readonly maxRetries?: number
  /** Longest `Retry-After` honoured (60 s); longer values are capped. */
  readonly maxRetryAfterMs?: number
  /** Client-side QPS limiter. */
  readonly limiter?: RequestLimiter
  readonly observer?: RequestObserver
  /** User-Agent header. */
  readonly userAgent?: string
  /** Source of uniform numbers in [0, 1) for retry jitter (`Math.random`). */
  readonly random?: () => number
  /** Headers sent with every request, e.g. `Impersonate-User`. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * Called before every attempt of a request that is not a GET; throwing refuses the request.
   * Leader election uses it so that a replica that does not lead cannot write.
   */
  readonly beforeWrite?: (method: string, path: string) => void
  /**
   * Decides the proxy of each request. By default, as client-go: the kubeconfig's `proxy-url`
   * when set (every request, no exemptions), else `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` of the
   * process (loopback exempt). A resolver that returns undefined connects directly.
   */
  readonly proxy?: ProxyResolver
}

const DEFAULT_TIMEOUT_MS = 30_000

/** Joins a base path prefix and an API path with a query string. */
export function buildRequestPath(
  basePath: string,
  path: string,
  query?: Readonly<Record<string, QueryValue>>
): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined) params.append(key, String(value))
  }
  const qs = params.toString()
  return `${basePath.replace(/\/+$/, '')}${path}${qs ? `?${qs}` : ''}`
}

/** Sends requests to one API server over a pooled, keep-alive HTTPS connection. */
export class KubeTransport {
  /** The configuration this transport was built from. */
  readonly config: ClusterConfig
  readonly #origin: string
  readonly #basePath: string
  readonly #credentials: CredentialSource
  readonly #timeoutMs: number
  readonly #maxRetries: number
  readonly #maxRetryAfterMs: number
  readonly #limiter: RequestLimiter | undefined
  readonly #observer: RequestObserver | undefined
  readonly #userAgent: string
  readonly #headers: Readonly<Record<string, string>>
  readonly #beforeWrite: ((method: string, path: string) => void) | undefined
  readonly #random: () => number
  readonly #proxy: ProxyResolver | undefined
  #connections = 0
  #agent: Dispatcher
  #agentCert: string | undefined

  constructor(config: ClusterConfig, options: KubeTransportOptions = {}) {
    this.config = config
    const url = new URL(config.server)
    this.#origin = url.origin
    this.#basePath = url.pathname === '/' ? '' : url.pathname
    this.#credentials = options.credentials ?? createCredentialSource(config)
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.#maxRetries = options.maxRetries ?? 10
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000
    this.#limiter = options.limiter
    this.#observer = options.observer
    this.#userAgent = options.userAgent ?? 'metacontroller-ts'
    this.#headers = options.headers ?? {}
    this.#beforeWrite = options.beforeWrite
    this.#random = options.random ?? Math.random
    this.#proxy = 'proxy' in options ? options.proxy : clientGoProxyResolver(config.proxyUrl)
    this.#agentCert = config.clientCertPem
    this.#agent = this.#createAgent(config.clientCertPem, config.clientKeyPem)
  }

  #createAgent(cert: string | undefined, key: string | undefined): Dispatcher {
    const connect: BuildConnectorOptions = {
      rejectUnauthorized: this.config.insecureSkipTlsVerify !== true,
    }
    if (this.config.caPem !== undefined) connect.ca = this.config.caPem
    if (cert !== undefined) connect.cert = cert
    if (key !== undefined) connect.key = key
    if (this.config.tlsServerName !== undefined) connect.servername = this.config.tlsServerName
    // Count sockets where they are made. NOTE: undici can open a second socket when a request is
    // dispatched in the same tick as the previous response ends, before the first socket is
    // marked free; so N requests in flight settle on up to 2N pooled sockets, never more.
    const connector = buildConnector(connect)
    const counted: typeof connector = (options, callback) => {
      // A TLS handshake over a proxy tunnel is not a connection of its own.
      if (options.httpSocket === undefined) this.#connections++
      connector(options, callback)
    }
    const pool = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 }
    if (this.#proxy === undefined) return new Agent({ connect: counted, ...pool })
    return proxyDispatcher({ connect: counted, resolve: this.#proxy, agent: pool })
  }

  /** How many TCP connections this transport has opened so far (pooling keeps this small). */
  get connectionsOpened(): number {
    return this.#connections
  }

  // An exec plugin may hand out a client certificate that rotates; TLS identity lives in the
  // agent, so a new certificate needs a new agent (the old one closes once its requests finish).
  #agentFor(credential: RequestCredential): Dispatcher {
    const cert = credential.clientCertPem ?? this.config.clientCertPem
    if (cert !== this.#agentCert) {
      const old = this.#agent
      this.#agent = this.#createAgent(cert, credential.clientKeyPem ?? this.config.clientKeyPem)
      this.#agentCert = cert
      void old.close()
    }
    return this.#agent
  }

  /** Sends a request and returns the parsed JSON body of a 2xx response. */
  async requestJson<T = unknown>(req: KubeRequest): Promise<T> {
    return this.#requestJson<T>(req, this.#limiter)
  }

  /**
   * A view of this transport (same connections, credentials and metrics) whose requests wait for
   * `limiter` instead of the transport's own.
   *
   * @remarks
   * client-go gives every client built from one config a token bucket of its own, so upstream's
   * discovery client never spends the tokens its dynamic client needs for writes; a view gives a
   * second client that budget without a second connection pool.
   */
  withLimiter(limiter: RequestLimiter | undefined): LimitedTransport {
    return { requestJson: <T>(req: KubeRequest) => this.#requestJson<T>(req, limiter) }
  }

  async #requestJson<T>(req: KubeRequest, limiter: RequestLimiter | undefined): Promise<T> {
    const body = await this.#send(req, limiter, bufferedExchange)
    req.onResponseBytes?.(body.length)
    const text = body.toString('utf8')
    return (text === '' ? undefined : JSON.parse(text)) as T
  }

  /** Sends a request and returns the body of a 2xx response as text (for `/readyz`, `/version`…). */
  async requestText(req: KubeRequest): Promise<string> {
    return (await this.#send(req, this.#limiter, bufferedExchange)).toString('utf8')
  }

  /**
   * Sends a request and returns the open body of a 2xx response, for line-delimited watches.
   *
   * @remarks
   * A watch is one long-running request, not a rate of requests: like the API server, which
   * counts long-running requests apart from its in-flight limits, it takes no client-side token.
   */
  async stream(req: KubeRequest): Promise<KubeStream> {
    return await this.#send(req, undefined, streamedExchange)
  }

  async #send<T>(
    req: KubeRequest,
    limiter: RequestLimiter | undefined,
    exchange: Exchange<T>
  ): Promise<T> {
    const path = buildRequestPath(this.#basePath, req.path, req.query)
    let reauthenticated = false
    for (let attempt = 0; ; attempt++) {
      const throttledMs = (await limiter?.take(req.signal)) ?? 0
      // Checked after the limiter's wait, so a write queued before leadership ended is refused.
      if (req.method !== 'GET') this.#beforeWrite?.(req.method, req.path)
      const started = Date.now()
      const credential = await this.#credentials.current(req.signal)
      const headers: Record<string, string> = {
        accept: req.accept ?? 'application/json',
        'user-agent': this.#userAgent,
        ...this.#headers,
      }
      if (credential.authorization !== undefined)
        headers['authorization'] = credential.authorization
      let body: string | null = null
      if (req.body !== undefined) {
        body = JSON.stringify(req.body)
        headers['content-type'] = req.contentType ?? 'application/json'
      }
      const timeoutMs = req.timeoutMs ?? this.#timeoutMs
      // The deadline covers the body too, so it is let go of only once the body is closed.
      const deadline = timeoutSignal(timeoutMs, [req.signal])
      let response: Answer<T>
      try {
        response = await exchange(this.#agentFor(credential), {
          origin: this.#origin,
          path,
          method: req.method,
          headers,
          body,
          signal: deadline.signal,
          headersTimeout: timeoutMs > 0 ? timeoutMs : 0,
          bodyTimeout: timeoutMs > 0 ? timeoutMs : 0,
        })
      } catch (error) {
        deadline.release()
        this.#observe(req.method, req.path, undefined, started, throttledMs)
        const message = `${req.method} ${path}: ${describeNetworkError(error)}`
        // A request the caller cancelled did reach nothing, but the cluster is not at fault.
        if (req.signal?.aborted === true) throw new Error(message, { cause: error })
        throw new ConnectionError(message, this.config.server, networkErrorCode(error), {
          cause: error,
        })
      }
      this.#observe(req.method, req.path, response.statusCode, started, throttledMs)
      if (response.statusCode >= 200 && response.statusCode < 300)
        return response.success(deadline.release)

      const text = await response.text().catch(() => '')
      deadline.release()
      const error = apiErrorFromResponse(
        response.statusCode,
        parseJsonOrText(text),
        { method: req.method, path },
        headerValue(response.headers['retry-after'])
      )
      if (response.statusCode === 401 && !reauthenticated) {
        reauthenticated = true
        this.#credentials.invalidate()
        continue
      }
      if (shouldRetry(error, attempt, this.#maxRetries)) {
        // Every client the server turned away got the same Retry-After; up to 50 % jitter on top
        // keeps them from all coming back in the same millisecond and being rejected again.
        const baseMs = Math.min(error.retryAfterMs ?? 1000, this.#maxRetryAfterMs)
        await abortableDelay(baseMs * (1 + 0.5 * this.#random()), req.signal)
        continue
      }
      throw error
    }
  }

  #observe(
    method: string,
    path: string,
    statusCode: number | undefined,
    started: number,
    throttledMs: number
  ): void {
    this.#observer?.onRequest({
      method,
      path,
      statusCode,
      durationMs: Date.now() - started,
      throttledMs,
    })
  }

  /** Closes the pooled connections; in-flight requests finish first. */
  async close(): Promise<void> {
    await this.#agent.close()
  }
}

function shouldRetry(error: ApiError, attempt: number, maxRetries: number): boolean {
  return error.statusCode === 429 && attempt < maxRetries
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
