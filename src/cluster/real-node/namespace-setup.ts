/**
 * What the cluster's supervisor does first inside its new network and mount namespaces (it runs
 * as root there): a loopback and a node address with a default route that leads nowhere outside,
 * the forwarding settings Pods and Services need (all of them per-namespace), covers over the
 * global sysctls the kubelet would change, and a tmpfs over the host directories containerd and
 * CNI hard-code.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MASKED_SYSCTLS, NODE_IP, NODE_PREFIX_LENGTH, PRIVATE_MOUNTS } from './real-node-layout.js'

function run(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/**
 * Brings up `lo` and a veth pair whose both ends stay in this namespace: `metactl0` carries the
 * node's address and the default route (the kubelet and kube-proxy need one), so nothing routes
 * out of the namespace. Enables forwarding and bridge netfilter, both per-namespace.
 */
export function setUpNodeNetwork(): void {
  run('ip', ['link', 'set', 'lo', 'up'])
  run('ip', ['link', 'add', 'metactl0', 'type', 'veth', 'peer', 'name', 'metactl1'])
  run('ip', ['addr', 'add', `${NODE_IP}/${NODE_PREFIX_LENGTH}`, 'dev', 'metactl0'])
  run('ip', ['link', 'set', 'metactl1', 'up'])
  run('ip', ['link', 'set', 'metactl0', 'up'])
  run('ip', ['route', 'add', 'default', 'dev', 'metactl0'])
  writeFileSync('/proc/sys/net/ipv4/ip_forward', '1\n')
  writeFileSync('/proc/sys/net/bridge/bridge-nf-call-iptables', '1\n')
}

/**
 * Binds a file of the cluster's own over each of {@link MASKED_SYSCTLS} in this mount namespace,
 * holding the host's current value: the kubelet reads and writes the file, the kernel setting
 * stays as the host has it.
 */
export function maskGlobalSysctls(sysctlDir: string): void {
  mkdirSync(sysctlDir, { recursive: true })
  for (const name of MASKED_SYSCTLS) {
    const path = `/proc/sys/${name}`
    if (!existsSync(path)) continue
    const file = join(sysctlDir, name.replaceAll('/', '.'))
    writeFileSync(file, readFileSync(path, 'utf8'))
    run('mount', ['--bind', file, path])
  }
}

/**
 * Mounts a tmpfs on each of {@link PRIVATE_MOUNTS} in this mount namespace and returns the
 * directories it had to create on the host for that (empty; `cluster down` removes them).
 */
export function mountPrivateDirs(): string[] {
  const created: string[] = []
  for (const dir of PRIVATE_MOUNTS) {
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true })
      created.push(dir)
    }
    run('mount', ['-t', 'tmpfs', '-o', 'mode=0711', 'tmpfs', dir])
  }
  return created
}

/** The inode of a namespace of a process, e.g. `net:[4026532301]`, or undefined when gone. */
export function namespaceId(pid: number | 'self', kind: 'net' | 'mnt'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`)
  } catch {
    return undefined
  }
}
