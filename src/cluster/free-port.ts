import { createServer } from 'node:net'
import type { ControlPlanePorts } from './component-flags.js'

/**
 * Finds a TCP port on 127.0.0.1 that is free right now.
 *
 * @remarks
 * **Caveats** Another process can take the port between this call and its use; callers that start
 * a server on it retry on "address already in use".
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => {
        resolve(port)
      })
    })
  })
}

/** Tells whether a TCP port on 127.0.0.1 can be bound right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => {
      resolve(false)
    })
    server.listen(port, '127.0.0.1', () => {
      server.close(() => {
        resolve(true)
      })
    })
  })
}

/** Free ports for every component of a local control plane; `apiServer` fixed when given. */
export async function pickControlPlanePorts(apiServer?: number): Promise<ControlPlanePorts> {
  return {
    etcd: await findFreePort(),
    etcdPeer: await findFreePort(),
    apiServer: apiServer ?? (await findFreePort()),
    controllerManager: await findFreePort(),
    scheduler: await findFreePort(),
    kwok: await findFreePort(),
  }
}
