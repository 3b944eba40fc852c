/**
 * Process supervision during a control plane's start: polls a component's readiness probe until
 * it answers, failing at once (with the log tail) when the process exits and after a deadline.
 *
 * @module
 */
import { Agent, request } from 'undici'
import { componentFailure } from './control-plane-start-error.js'
import type { KubeTransport } from '../kube/kube-transport.js'
import type { ManagedProcess } from './managed-process.js'

/** Polls `probe` every 200 ms until it returns true; reports the time taken to `onProgress`. */
export async function awaitComponentReady(
  proc: ManagedProcess,
  timeoutMs: number,
  probe: () => Promise<boolean>,
  onProgress: (message: string) => void
): Promise<void> {
  const started = Date.now()
  let lastError: unknown
  for (;;) {
    // A component that exited will never become ready: fail at once with its log.
    if (proc.exitStatus !== undefined)
      throw componentFailure(proc, 'exited during startup', lastError)
    try {
      if (await probe()) break
    } catch (error) {
      lastError = error
    }
    if (Date.now() - started > timeoutMs) {
      throw componentFailure(proc, `was not ready after ${timeoutMs} ms`, lastError)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  onProgress(`${proc.spec.name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

/**
 * Waits for a component's `/healthz` on 127.0.0.1: the controller manager and the scheduler serve
 * it over TLS with a self-signed certificate.
 */
export async function awaitHealthz(
  proc: ManagedProcess,
  port: number,
  timeoutMs: number,
  onProgress: (message: string) => void
): Promise<void> {
  const agent = new Agent({ connect: { rejectUnauthorized: false } })
  try {
    await awaitComponentReady(
      proc,
      timeoutMs,
      async () => {
        const res = await request(`https://127.0.0.1:${port}/healthz`, {
          dispatcher: agent,
          headersTimeout: 2000,
          bodyTimeout: 2000,
        })
        await res.body.text()
        return res.statusCode === 200
      },
      onProgress
    )
  } finally {
    await agent.close()
  }
}

/** Whether etcd at `clientUrl` reports itself healthy. */
export async function etcdHealthy(clientUrl: string): Promise<boolean> {
  const res = await request(`${clientUrl}/health`, { headersTimeout: 2000, bodyTimeout: 2000 })
  const body = await res.body.text()
  return res.statusCode === 200 && body.includes('"health":"true"')
}

/** Probes the API server's `/readyz` with credentials (anonymous may be 403 until RBAC bootstrap). */
export async function apiServerReady(transport: KubeTransport): Promise<boolean> {
  const body = await transport.requestText({ method: 'GET', path: '/readyz', accept: 'text/plain' })
  return body.trim() === 'ok'
}
