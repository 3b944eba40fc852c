/**
 * A cluster we attach to instead of starting one (`$KUBECONFIG`): it has no processes of ours,
 * so stopping it only closes our connections.
 *
 * @module
 */
import type { ClusterConfig } from '../kube/cluster-config.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import type { ControlPlane } from './control-plane-options.js'
import { installCrds } from './install-crds.js'
import type { CrdSource } from './install-crds.js'

/** The {@link ControlPlane} of an existing cluster. */
export class ExistingControlPlane implements ControlPlane {
  readonly dir = ''
  readonly isExisting = true
  readonly etcdUrl = undefined
  readonly nodeNames: readonly string[] = []
  readonly kubeconfigPath: string
  readonly config: ClusterConfig
  readonly client: DynamicClient
  readonly #transport: KubeTransport

  constructor(kubeconfigPath: string, config: ClusterConfig) {
    this.kubeconfigPath = kubeconfigPath
    this.config = config
    this.#transport = new KubeTransport(config)
    this.client = new DynamicClient(this.#transport)
  }

  async installCrds(crds: readonly CrdSource[]): Promise<void> {
    await installCrds(this.client, crds)
  }

  restartApiServer(): Promise<void> {
    return Promise.reject(new Error('cannot restart the API server of an existing cluster'))
  }

  async stop(): Promise<void> {
    await this.#transport.close()
  }

  release(): Promise<void> {
    return this.stop()
  }
}
