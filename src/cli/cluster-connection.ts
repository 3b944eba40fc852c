/**
 * One connection to a cluster for the commands that read it (`tree`, `version`, `dev`): the
 * kubeconfig resolved as `kubectl` would, a transport, a dynamic client and discovery.
 *
 * @module
 */
import { Option } from 'commander'
import { Discovery } from '../kube/discovery.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import { loadClusterConfig } from '../kube/load-cluster-config.js'
import type { ClusterConfig } from '../kube/cluster-config.js'

/** The flags that pick a cluster. */
export interface ClusterFlags {
  readonly kubeconfig?: string
  readonly context?: string
}

/** An open connection; `close()` releases its sockets. */
export interface ClusterConnection {
  readonly config: ClusterConfig
  readonly transport: KubeTransport
  readonly client: DynamicClient
  readonly discovery: Discovery
  close(): Promise<void>
}

/** The `--kubeconfig` and `--context` options, worded as in `metactl run`. */
export function clusterOptions(): Option[] {
  return [
    new Option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config)'),
    new Option('--context <name>', 'kubeconfig context (default: current-context)'),
  ]
}

/** Connects to the cluster the flags (or the environment) name. */
export async function connectCluster(
  flags: ClusterFlags,
  options: { readonly timeoutMs?: number } = {}
): Promise<ClusterConnection> {
  const config = await loadClusterConfig({ kubeconfig: flags.kubeconfig, context: flags.context })
  const transport = new KubeTransport(config, { timeoutMs: options.timeoutMs ?? 10_000 })
  return {
    config,
    transport,
    client: new DynamicClient(transport),
    discovery: new Discovery(transport),
    close: () => transport.close(),
  }
}
