/**
 * Starts the real node's components inside the cluster's namespaces: containerd (then the images
 * imported into it), the kubelet and kube-proxy, each a managed process with its log in
 * `<dir>/logs/`, each waited for until it works.
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import { NotFoundError } from '../../kube/api-error.js'
import { logTail, ManagedProcess } from '../managed-process.js'
import { isNodeReady, NODES } from '../simulated-nodes.js'
import { waitFor } from '../../runtime/clock/wait-for.js'
import {
  cniConfList,
  containerdConfigToml,
  kubeletConfigYaml,
  kubeProxyConfigYaml,
} from './node-config-files.js'
import type { RealNodeLayout } from './real-node-layout.js'
import type { NodeComponentPaths } from './node-binaries.js'

const execFileAsync = promisify(execFile)

/** Raised when a node component does not come up; the message carries its log tail. */
export class NodeComponentError extends Error {
  override readonly name = 'NodeComponentError'
}

/** A component's name for node `layout.index`: `kubelet` for node 1, `kubelet-2` for node 2, … */
export function componentName(layout: Pick<RealNodeLayout, 'index'>, name: string): string {
  return layout.index === 1 ? name : `${name}-${layout.index}`
}

// Node 2 and later: `nsenter` enters the node's network namespace and execs the component, so the
// pid and argv[0] recorded are the component's own.
function spawnComponent(
  layout: RealNodeLayout,
  base: string,
  command: string,
  args: string[],
  env?: Record<string, string>
): ManagedProcess {
  const name = componentName(layout, base)
  return ManagedProcess.start(
    {
      name,
      command,
      args,
      logFile: join(layout.logsDir, `${name}.log`),
      ...(env === undefined ? {} : { env }),
      ...(layout.netnsFile === undefined
        ? {}
        : {
            launch: {
              command: 'nsenter',
              args: [`--net=${layout.netnsFile}`, '--', command, ...args],
            },
          }),
    },
    true
  )
}

async function awaitComponent(
  proc: ManagedProcess,
  timeoutMs: number,
  what: string,
  probe: () => Promise<boolean>
): Promise<void> {
  try {
    await waitFor(
      async () => {
        if (proc.exitStatus !== undefined) throw new Error(`it exited (${proc.exitStatus})`)
        try {
          return await probe()
        } catch {
          return false
        }
      },
      { timeoutMs, intervalMs: 250, description: what }
    )
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new NodeComponentError(
      `${proc.spec.name}: ${reason}. Last lines of ${proc.spec.logFile}:\n${logTail(proc.spec.logFile)}`,
      { cause: error }
    )
  }
}

/** Writes the node's configuration files (containerd, CNI, kubelet, kube-proxy). */
export function writeNodeConfig(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  kubeconfig: string
): void {
  for (const dir of [layout.cniConfDir, layout.cniDataDir, layout.kubeletRoot, layout.podLogsDir]) {
    mkdirSync(dir, { recursive: true })
  }
  writeFileSync(layout.containerdConfig, containerdConfigToml(layout, paths.binDir))
  writeFileSync(join(layout.cniConfDir, '10-metactl.conflist'), cniConfList(layout))
  writeFileSync(layout.kubeletConfig, kubeletConfigYaml(layout))
  writeFileSync(layout.kubeProxyConfig, kubeProxyConfigYaml(kubeconfig, layout))
  // Pods resolve through the cluster DNS only: no search domain or nameserver of the host's.
  writeFileSync(layout.resolvConf, '')
}

function ctr(paths: NodeComponentPaths, layout: RealNodeLayout, args: string[]): Promise<unknown> {
  return execFileAsync(join(paths.binDir, 'ctr'), ['--address', layout.containerdSocket, ...args])
}

/** Starts containerd and waits until it answers; its shims and runc come from the bin dir. */
export async function startContainerd(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  timeoutMs: number
): Promise<ManagedProcess> {
  const proc = spawnComponent(
    layout,
    'containerd',
    join(paths.binDir, 'containerd'),
    ['--config', layout.containerdConfig],
    // containerd finds containerd-shim-runc-v2 on PATH.
    { PATH: `${paths.binDir}:${process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` }
  )
  await awaitComponent(proc, timeoutMs, 'containerd to answer', async () => {
    await ctr(paths, layout, ['version'])
    return true
  })
  return proc
}

/** Imports the image archives into the CRI's `k8s.io` namespace, so the kubelet never pulls. */
export async function importImages(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  archives: readonly string[]
): Promise<void> {
  for (const archive of archives) {
    await ctr(paths, layout, ['-n', 'k8s.io', 'images', 'import', archive])
  }
}

/** Starts the kubelet and waits until its Node is Ready. */
export async function startKubelet(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  kubeconfig: string,
  client: DynamicClient,
  timeoutMs: number
): Promise<ManagedProcess> {
  const proc = spawnComponent(layout, 'kubelet', join(paths.binDir, 'kubelet'), [
    `--config=${layout.kubeletConfig}`,
    `--kubeconfig=${kubeconfig}`,
    `--root-dir=${layout.kubeletRoot}`,
    `--cert-dir=${join(layout.kubeletRoot, 'pki')}`,
    `--hostname-override=${layout.nodeName}`,
    `--node-ip=${layout.nodeIp}`,
    '--v=2',
  ])
  await awaitComponent(proc, timeoutMs, `Node ${layout.nodeName} to be Ready`, async () => {
    try {
      return isNodeReady(await client.get(NODES, layout.nodeName))
    } catch (error) {
      if (error instanceof NotFoundError) return false
      throw error
    }
  })
  return proc
}

/** Starts kube-proxy and waits until its health endpoint answers. */
export async function startKubeProxy(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  timeoutMs: number
): Promise<ManagedProcess> {
  const proc = spawnComponent(layout, 'kube-proxy', join(paths.binDir, 'kube-proxy'), [
    `--config=${layout.kubeProxyConfig}`,
    '--v=2',
  ])
  await awaitComponent(proc, timeoutMs, 'kube-proxy /healthz', async () => {
    const res = await fetch(`http://${layout.kubeProxyHealthz}/healthz`)
    await res.text()
    return res.ok
  })
  return proc
}
