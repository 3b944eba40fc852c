/**
 * Serves hooks as webhooks on `node:http`, for any Metacontroller-compatible engine.
 *
 * @module
 */
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isJsonObject } from '../core/kube-object.js'
import type { CrdSchema } from './crd-schema.js'
import { crdVersionSchema } from './crd-schema.js'
import type { Hook } from './hook-types.js'
import { parentSchemaMismatch, parentSchemaOf } from './parent-schema-check.js'
import { messageOf } from '../core/message-of.js'

/** Options of {@link serveHooks}. */
export interface ServeHooksOptions {
  /** Port to listen on; 0 picks a free one (8080). */
  readonly port?: number
  /** Address to listen on (`127.0.0.1`; use `0.0.0.0` in a container). */
  readonly host?: string
  /** Largest request body accepted, in bytes (4 MiB); larger requests get 413. */
  readonly bodyLimitBytes?: number
  /**
   * A CustomResourceDefinition, or a list of them (the objects, as parsed from YAML): each
   * request's parent (or decorated object) is checked against the schema of the version it names,
   * in the CRD of its own group and kind, first, and a mismatch is answered 422 with the path of
   * every bad field, instead of reaching the hook. A parent of another kind (a DecoratorController
   * target such as a Namespace, served by the same server) is not checked, as the API server
   * would not check it against that CRD. Useful when the CRD in the cluster may be older than the
   * hook, or objects predate its validation.
   */
  readonly parentCrd?: unknown
  /** Receives one line per failed request (stderr as JSON by default). */
  readonly log?: (entry: {
    level: 'error' | 'info'
    msg: string
    path?: string
    error?: string
  }) => void
}

/** A running hook server. */
export interface HookServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string
  readonly port: number
  /** Stops accepting requests, lets in-flight ones finish, and closes idle connections. */
  close(): Promise<void>
}

class HttpError extends Error {
  override readonly name = 'HttpError'
  readonly status: number
  readonly details: Record<string, unknown>
  constructor(status: number, message: string, details: Record<string, unknown> = {}) {
    super(message)
    this.status = status
    this.details = details
  }
}

/** Answers 422 when the request's parent does not match the schema of its kind's CRD. */
function checkParent(request: unknown, crds: readonly unknown[]): void {
  if (!isJsonObject(request)) throw new HttpError(400, 'request body is not a JSON object')
  const parent = request['parent'] ?? request['object']
  if (!isJsonObject(parent))
    throw new HttpError(422, 'request has no parent object', { field: 'parent' })
  let schema: CrdSchema | undefined
  try {
    schema = parentSchemaOf(parent, crds)
  } catch (error) {
    // A parent of a version its CRD does not serve: the API server would not have stored it.
    throw new HttpError(422, `parent ${String(parent['kind'])}: ${(error as Error).message}`)
  }
  if (schema === undefined) return
  const mismatch = parentSchemaMismatch(parent, schema)
  if (mismatch === undefined) return
  throw new HttpError(422, mismatch.message, {
    field: mismatch.field,
    violations: mismatch.violations,
  })
}

/** The `parentCrd` option as a list, each CRD checked up front so a bad one fails at start. */
function parentCrds(option: unknown): readonly unknown[] {
  if (option === undefined) return []
  const crds = Array.isArray(option) ? (option as unknown[]) : [option]
  for (const crd of crds) crdVersionSchema(crd)
  return crds
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        // Drain the rest instead of cutting the socket, so the client can read the 413.
        req.removeAllListeners('data')
        req.resume()
        reject(new HttpError(413, `request body over ${limit} bytes`))
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'))
    })
    req.on('error', reject)
  })
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

/**
 * Serves each hook at its path (POST, `application/json`), plus `GET /healthz`.
 *
 * @remarks
 * Any hook can be served: CompositeController and DecoratorController sync and finalize hooks,
 * and customize hooks. Each gets the request body as parsed JSON and its answer is sent back as
 * JSON; the engine that calls it validates the answer.
 *
 * A hook that throws answers 500 with the error's message (the engine records it in a Warning
 * event on the parent) and logs a line. With `parentCrd`, a parent that does not match the
 * schema of its own kind's CRD answers 422 `{ error, field, violations }` without calling the
 * hook; parents of other kinds are not checked. Bodies that are not JSON get 400, wrong content
 * types 415, other methods 405.
 *
 * @example
 * ```ts
 * const server = await serveHooks(
 *   { '/sync': sync, '/decorate': decorateSync },
 *   { port: 8080, host: '0.0.0.0' }
 * )
 * process.once('SIGTERM', () => void server.close())
 * ```
 */
export async function serveHooks(
  routes: Readonly<Record<string, Hook<never, unknown>>>,
  options: ServeHooksOptions = {}
): Promise<HookServer> {
  const limit = options.bodyLimitBytes ?? 4 * 1024 * 1024
  const crds = parentCrds(options.parentCrd)
  const log =
    options.log ??
    ((entry): void => {
      process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`)
    })
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    if (path === '/healthz') {
      send(res, 200, 'ok', 'text/plain')
      return
    }
    const hook = routes[path] as Hook<unknown, unknown> | undefined
    if (hook === undefined) throw new HttpError(404, `no hook at ${path}`)
    if (req.method !== 'POST')
      throw new HttpError(405, `${req.method ?? ''} not allowed; hooks take POST`)
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim()
    if (type !== 'application/json')
      throw new HttpError(415, `content type must be application/json, not "${type ?? ''}"`)
    const text = await readBody(req, limit)
    let request: unknown
    try {
      request = JSON.parse(text)
    } catch {
      throw new HttpError(400, 'request body is not JSON')
    }
    if (crds.length > 0) checkParent(request, crds)
    let response: unknown
    try {
      response = await hook(request)
    } catch (error) {
      const message = messageOf(error)
      log({ level: 'error', msg: 'hook failed', path, error: message })
      throw new HttpError(500, `hook ${path} failed: ${message}`)
    }
    send(res, 200, JSON.stringify(response ?? {}))
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500
      const message = messageOf(error)
      if (!(error instanceof HttpError))
        log({ level: 'error', msg: 'request failed', error: message })
      const details = error instanceof HttpError ? error.details : {}
      if (error instanceof HttpError && error.status === 422)
        log({ level: 'error', msg: 'invalid parent', error: message })
      if (!res.headersSent) send(res, status, JSON.stringify({ error: message, ...details }))
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 8080, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port, address } = server.address() as AddressInfo
  const host = address.includes(':') ? `[${address}]` : address
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve()
        })
        server.closeIdleConnections()
      }),
  }
}
