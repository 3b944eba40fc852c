import { createServer } from 'node:http'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the operations server reports. */
export interface OpsServerSources {
  /** Prometheus text exposition. */
  readonly metrics?: () => Promise<string>
  /** Returns the reasons the process is not ready; empty when ready. */
  readonly notReady?: () => string[]
  /**
   * Returns what `/readyz?verbose` adds without failing readiness: caches RBAC forbids, which
   * do not count (docs/deploy.md, "RBAC").
   */
  readonly readyNotes?: () => string[]
  /** Returns the reasons the process is not alive (`/healthz` fails); empty when healthy. */
  readonly notHealthy?: () => string[]
}

/**
 * Parses a listen address as upstream flags give it: `:9999`, `127.0.0.1:9999`, `[::1]:9999`,
 * or `0` to disable.
 */
export function parseListenAddress(text: string): { host: string; port: number } | undefined {
  if (text === '0' || text === '') return undefined
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text)
  if (match === null) throw new Error(`invalid listen address "${text}": use host:port, :port or 0`)
  const port = Number(match[3])
  if (port > 65535) throw new Error(`invalid port in "${text}"`)
  const host = match[1] ?? match[2] ?? ''
  return { host: host === '' ? '0.0.0.0' : host, port }
}

/**
 * The body of `/readyz?verbose`, in the API server's style: a `[-]` line per reason, a `[!]` line
 * per note (not counted), then whether the check passed.
 */
function verboseReadiness(reasons: readonly string[], notes: readonly string[]): string {
  return [
    ...reasons.map((r) => `[-]${r}`),
    ...notes.map((n) => `[!]${n} (not counted)`),
    reasons.length === 0 ? 'readyz check passed' : 'readyz check failed',
  ].join('\n')
}

/** Serves `/metrics`, `/healthz` and `/readyz` on one address. */
export async function startOpsServer(
  address: { host: string; port: number },
  sources: OpsServerSources
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method !== 'GET') {
      res.writeHead(405).end()
      return
    }
    if (path === '/healthz' || path === '/livez') {
      const reasons = sources.notHealthy?.() ?? []
      res
        .writeHead(reasons.length === 0 ? 200 : 500, { 'content-type': 'text/plain' })
        .end(reasons.length === 0 ? 'ok' : reasons.join('\n'))
      return
    }
    if (path === '/readyz') {
      const reasons = sources.notReady?.() ?? []
      const verbose = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').has('verbose')
      res
        .writeHead(reasons.length === 0 ? 200 : 503, { 'content-type': 'text/plain' })
        .end(
          verbose
            ? verboseReadiness(reasons, sources.readyNotes?.() ?? [])
            : reasons.join('\n') || 'ok'
        )
      return
    }
    if (path === '/metrics' && sources.metrics !== undefined) {
      sources.metrics().then(
        (text) => {
          res
            .writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' })
            .end(text)
        },
        (error: unknown) => {
          res.writeHead(500).end(String(error))
        }
      )
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(address.port, address.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  return {
    server,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}
