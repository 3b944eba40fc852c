// A loopback TCP proxy in front of the API server, so a test can cut one process's API
// connection (a network partition of that process) while everything else keeps talking.
import { connect, createServer } from 'node:net'
import type { Socket } from 'node:net'

/** A running {@link startPartitionProxy}. */
export interface PartitionProxy {
  /** The proxy's loopback port. */
  readonly port: number
  /** Drops every open connection and closes new ones at once, from now on. */
  cut(): void
  /** Stops listening and drops what is still open. */
  close(): void
}

/** Listens on a free loopback port and forwards every connection to `target`'s host and port. */
export async function startPartitionProxy(target: URL): Promise<PartitionProxy> {
  let partitioned = false
  const sockets = new Set<Socket>()
  const proxy = createServer((client) => {
    if (partitioned) {
      client.destroy()
      return
    }
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(client).add(upstream)
    client.pipe(upstream).pipe(client)
    const close = (): void => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const address = proxy.address()
  if (address === null || typeof address === 'string') throw new Error('no proxy address')
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    port: address.port,
    cut: () => {
      partitioned = true
      dropAll()
    },
    close: () => {
      proxy.close()
      dropAll()
    },
  }
}
