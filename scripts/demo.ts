// `make demo`: starts the local control plane, shows that it answers, and stops it.
// The PodService walk-through replaces the middle part once the engine exists.
import { execFileSync } from 'node:child_process'
import { startControlPlane } from '../src/testing/index.js'

function step(message: string): void {
  process.stdout.write(`\n==> ${message}\n`)
}

const started = Date.now()
step('Starting a local control plane (etcd, kube-apiserver, kube-controller-manager) on 127.0.0.1')
const plane = await startControlPlane({
  useExistingCluster: false,
  onProgress: (message) => {
    process.stdout.write(`    ${message}\n`)
  },
})
try {
  step(
    `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. kubeconfig: ${plane.kubeconfigPath}`
  )
  const kubectl = (...args: string[]): void => {
    process.stdout.write(`$ kubectl ${args.join(' ')}\n`)
    process.stdout.write(
      execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, ...args], { encoding: 'utf8' })
    )
  }
  kubectl('version')
  kubectl('get', 'namespaces')
  kubectl('api-resources', '--api-group=apiextensions.k8s.io')
  step(
    'Note: this control plane has no nodes (no kubelet, no scheduler), so Pods would stay Pending.'
  )
} finally {
  step('Stopping the control plane')
  await plane.stop()
}
step('Done; nothing is left running.')
