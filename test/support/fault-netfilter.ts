// Cuts one Pod from the API server with netfilter rules inside the cluster's own network
// namespace (entered through a node process's /proc entry; the host's rules are never touched):
// the Pod's packets to kube-apiserver's port and the server's packets back to the Pod are
// dropped, so its connections hang as in a partition rather than fail fast.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { isProcessRunning } from '../../src/cluster/managed-process.js'
import { realNodeLayout } from '../../src/cluster/real-node/real-node-layout.js'
import { readRealNodeState } from '../../src/cluster/real-node/real-node-state.js'

const exec = promisify(execFile)

/** The `iptables` rule specs (chain first) that cut `podIp` from the API server on `apiPort`. */
export function cutRules(podIp: string, apiPort: number): string[][] {
  const tcp = ['-p', 'tcp']
  return [
    ['INPUT', '-s', podIp, ...tcp, '--dport', String(apiPort), '-j', 'DROP'],
    ['OUTPUT', '-d', podIp, ...tcp, '--sport', String(apiPort), '-j', 'DROP'],
  ]
}

// A live process of the node (kube-proxy, in the cluster's network namespace) to enter through.
function namespacePid(dir: string): { pid: number; apiPort: number } {
  const state = readRealNodeState(realNodeLayout(dir).stateFile)
  const proxy = state?.processes.find((p) => p.name === 'kube-proxy')
  if (state === undefined || proxy === undefined || !isProcessRunning(proxy.pid, proxy.command)) {
    throw new Error(`no running kube-proxy recorded in ${dir}`)
  }
  return { pid: proxy.pid, apiPort: state.apiServerPort }
}

async function iptables(pid: number, args: readonly string[]): Promise<void> {
  await exec('nsenter', [`--net=/proc/${pid}/ns/net`, '--', 'iptables', '-w', ...args])
}

/**
 * Cuts `podIp` from the API server of the real node's cluster in `dir`; resolves with the
 * function that restores it (removes exactly the rules added).
 */
export async function cutFromApiServer(dir: string, podIp: string): Promise<() => Promise<void>> {
  const { pid, apiPort } = namespacePid(dir)
  const rules = cutRules(podIp, apiPort)
  for (const [chain = '', ...spec] of rules) await iptables(pid, ['-I', chain, '1', ...spec])
  return async () => {
    for (const [chain = '', ...spec] of rules) await iptables(pid, ['-D', chain, ...spec])
  }
}
