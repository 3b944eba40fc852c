/**
 * Node ports the host reaches on 127.0.0.1, as kind's `extraPortMappings` give a kind node's
 * ports to the host: `127.0.0.1:hostPort` on the host is forwarded, through a Unix socket in the
 * cluster's directory, to `NODE_IP:nodePort` inside the cluster's network namespace, where
 * kube-proxy routes a NodePort Service (an ingress controller's, for instance) to its Pods.
 *
 * @module
 */
import { join } from 'node:path'

/** One published node port. */
export interface PublishedPort {
  /** The port on the host's 127.0.0.1. */
  readonly hostPort: number
  /** The node port (30000-32767, a NodePort Service's `nodePort`) inside the namespace. */
  readonly nodePort: number
}

/** Raised for a `HOSTPORT:NODEPORT` that is not one. */
export class PublishedPortError extends Error {
  override readonly name = 'PublishedPortError'
}

const NODE_PORT_MIN = 30000
const NODE_PORT_MAX = 32767

/** Parses `HOSTPORT:NODEPORT` (e.g. `8080:30080`). */
export function parsePublishedPort(text: string): PublishedPort {
  const match = /^(\d{1,5}):(\d{1,5})$/.exec(text)
  const hostPort = Number(match?.[1])
  const nodePort = Number(match?.[2])
  if (match === null || hostPort < 1 || hostPort > 65535) {
    throw new PublishedPortError(
      `"${text}" is not HOSTPORT:NODEPORT (e.g. 8080:30080, the host port from 1 to 65535)`
    )
  }
  if (nodePort < NODE_PORT_MIN || nodePort > NODE_PORT_MAX) {
    throw new PublishedPortError(
      `"${text}": the node port must be in the NodePort range ${NODE_PORT_MIN}-${NODE_PORT_MAX}`
    )
  }
  return { hostPort, nodePort }
}

/** The Unix socket between the host's forwarder and the one inside, for `port`. */
export function publishedPortSocket(dir: string, port: PublishedPort): string {
  return join(dir, `published-${port.hostPort}.sock`)
}
