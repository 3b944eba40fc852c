/**
 * `--pprof-address`: serves heap and CPU profiles in the pprof protobuf format at Go's paths, so
 * `go tool pprof http://HOST:PORT/debug/pprof/heap` works against `metactl run` as against
 * upstream.
 *
 * @remarks
 * The profiles come from V8's sampling heap profiler and CPU profiler through `@datadog/pprof`,
 * which converts them to pprof (gzipped protobuf, which `go tool pprof` reads). The heap profile
 * is V8's allocation *sample* of live objects (like Go's `inuse_space`), taken every 512 KiB.
 *
 * @module
 */
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encode, heap, time } from '@datadog/pprof'
import { messageOf } from '../core/message-of.js'

/** Bytes between heap samples (V8's default is 512 KiB). */
const HEAP_SAMPLE_BYTES = 512 * 1024
/** Frames kept per sampled stack. */
const STACK_DEPTH = 64
/** Go's default CPU profile duration, in seconds. */
const DEFAULT_PROFILE_SECONDS = 30
/** Longest CPU profile served, in seconds (a guard against a typo holding the profiler). */
const MAX_PROFILE_SECONDS = 600
/** How long shutdown waits for a running profile before closing its connection (as upstream). */
const SHUTDOWN_GRACE_MS = 5_000

const INDEX = `<html><body><h1>/debug/pprof/</h1>
<a href="heap">heap</a> (sampled live heap)<br>
<a href="profile?seconds=${DEFAULT_PROFILE_SECONDS}">profile</a> (CPU, ?seconds=N)<br>
</body></html>`

let cpuBusy = false

async function sendProfile(
  res: ServerResponse,
  name: string,
  profile: Parameters<typeof encode>[0]
): Promise<void> {
  const body = await encode(profile)
  res
    .writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${name}"`,
    })
    .end(body)
}

async function cpuProfile(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = new URL(req.url ?? '/', 'http://localhost').searchParams.get('seconds')
  const seconds = text === null || text === '' ? DEFAULT_PROFILE_SECONDS : Number(text)
  if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
    res
      .writeHead(400, { 'content-type': 'text/plain' })
      .end(`seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}\n`)
    return
  }
  if (cpuBusy) {
    // Go answers the same way: one CPU profile at a time.
    res
      .writeHead(500, { 'content-type': 'text/plain' })
      .end('Could not enable CPU profiling: cpu profiling already in use\n')
    return
  }
  cpuBusy = true
  try {
    await sendProfile(res, 'profile', await time.profile({ durationMillis: seconds * 1000 }))
  } finally {
    cpuBusy = false
  }
}

function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname
  if (req.method !== 'GET') {
    res.writeHead(405).end()
    return Promise.resolve()
  }
  if (path === '/debug/pprof/' || path === '/debug/pprof') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(INDEX)
    return Promise.resolve()
  }
  if (path === '/debug/pprof/heap') return sendProfile(res, 'heap', heap.profile())
  if (path === '/debug/pprof/profile') return cpuProfile(req, res)
  res.writeHead(404, { 'content-type': 'text/plain' }).end('unknown profile\n')
  return Promise.resolve()
}

/** A running profile server. */
export interface PprofServer {
  readonly port: number
  /** Stops the server; a profile still running after 5 s has its connection closed. */
  close(): Promise<void>
}

/** Starts the heap sampler and serves `/debug/pprof/heap` and `/debug/pprof/profile`. */
export async function startPprofServer(address: {
  host: string
  port: number
}): Promise<PprofServer> {
  heap.start(HEAP_SAMPLE_BYTES, STACK_DEPTH)
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(`profile failed: ${messageOf(error)}\n`)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(address.port, address.host, resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
      server.closeIdleConnections()
      const timer = setTimeout(() => {
        server.closeAllConnections()
      }, SHUTDOWN_GRACE_MS)
      await closed
      clearTimeout(timer)
      heap.stop()
    },
  }
}
