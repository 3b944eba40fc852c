/**
 * The network namespace of a second (third, …) real node and its link to the cluster's own.
 *
 * @remarks
 * The cluster's namespace (where the control plane and node 1 run) is the hub: each further node
 * `k` gets a namespace of its own, bound to a file in its directory (`unshare --net=FILE`, visible
 * only in the cluster's private mount namespace), joined to the hub by a veth pair, `mnode<k>` in
 * the hub and `eth0` in the node. The node's address `10.245.0.k/32` is on `eth0` with a default
 * route via the hub's `10.245.0.1`; the hub routes `10.245.0.k` and the node's Pod subnet
 * `10.244.(k-1).0/24` into `mnode<k>`. So every Pod reaches every other Pod, node and the API
 * server through the hub, which forwards (its `ip_forward` is on), and nothing routes out of the
 * cluster's namespaces: the hub still has no link to the host. Forwarding and bridge netfilter
 * are per-namespace settings, set here in the node's; no host setting changes.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { NODE_IP } from './real-node-layout.js'
import type { RealNodeLayout } from './real-node-layout.js'

/** One `ip` (or other) command line, as run in the hub or in the node's namespace. */
export interface NetworkCommand {
  /** `hub`: the cluster's namespace (the caller's); `node`: the node's own. */
  readonly where: 'hub' | 'node'
  readonly args: readonly string[]
}

/** The hub's end of node `index`'s veth pair. */
export function hubLinkName(index: number): string {
  return `mnode${index}`
}

/**
 * The commands that link node `layout.index` (2 or more) to the hub, in order; `hubPid` is a
 * process in the hub's namespace (the supervisor), where the veth's other end is created.
 */
export function extraNodeNetworkCommands(
  layout: Pick<RealNodeLayout, 'index' | 'nodeIp' | 'podSubnet'>,
  hubPid: number
): NetworkCommand[] {
  const hubLink = hubLinkName(layout.index)
  const node = (...args: string[]): NetworkCommand => ({ where: 'node', args: ['ip', ...args] })
  const hub = (...args: string[]): NetworkCommand => ({ where: 'hub', args: ['ip', ...args] })
  return [
    node('link', 'set', 'lo', 'up'),
    node('link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', hubLink, 'netns', String(hubPid)),
    node('addr', 'add', `${layout.nodeIp}/32`, 'dev', 'eth0'),
    node('link', 'set', 'eth0', 'up'),
    node('route', 'add', NODE_IP, 'dev', 'eth0', 'scope', 'link'),
    node('route', 'add', 'default', 'via', NODE_IP, 'dev', 'eth0', 'src', layout.nodeIp),
    hub('link', 'set', hubLink, 'up'),
    hub('route', 'add', `${layout.nodeIp}/32`, 'dev', hubLink, 'src', NODE_IP),
    hub('route', 'add', layout.podSubnet, 'via', layout.nodeIp, 'dev', hubLink),
  ]
}

function run(netnsFile: string, command: NetworkCommand): void {
  const [program = 'ip', ...args] = command.args
  const argv =
    command.where === 'node'
      ? ['nsenter', `--net=${netnsFile}`, '--', program, ...args]
      : command.args
  try {
    execFileSync(argv[0] ?? 'ip', argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim() ?? ''
    throw new Error(`${argv.join(' ')} failed: ${stderr}`, { cause: error })
  }
}

// Writes a per-namespace setting of the node's namespace (/proc/sys/net follows the writer's).
function setNodeSysctl(netnsFile: string, name: string): void {
  execFileSync('nsenter', [`--net=${netnsFile}`, '--', 'sh', '-c', `echo 1 > /proc/sys/${name}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

/**
 * Creates node `layout.index`'s network namespace (2 or more) and links it to the hub; runs in
 * the supervisor, in the cluster's namespaces. Returns the namespace's id (`net:[inode]`), which
 * `cluster down` checks no process is left in.
 */
export function createExtraNodeNetwork(layout: RealNodeLayout): string {
  const netnsFile = layout.netnsFile
  if (netnsFile === undefined) throw new Error(`node ${layout.index} runs in the hub's namespace`)
  mkdirSync(dirname(netnsFile), { recursive: true })
  writeFileSync(netnsFile, '')
  // The bind mount keeps the namespace alive with no process in it, until the mount namespace
  // (the cluster's, private) goes with its last process at `down`.
  execFileSync('unshare', [`--net=${netnsFile}`, 'true'], { stdio: ['ignore', 'ignore', 'pipe'] })
  for (const command of extraNodeNetworkCommands(layout, process.pid)) run(netnsFile, command)
  setNodeSysctl(netnsFile, 'net/ipv4/ip_forward')
  setNodeSysctl(netnsFile, 'net/bridge/bridge-nf-call-iptables')
  return `net:[${statSync(netnsFile).ino}]`
}
