// `make run`: the demo's setup (a local control plane with the CRDs, the hook as a webhook, the
// engine, sample.yaml), left running for you to try with kubectl until Ctrl-C or SIGTERM, which
// stop everything.
//
// METACTL_USE_EXISTING_CLUSTER=1 runs the engine and the hook here against the cluster in
// $KUBECONFIG instead (a kind cluster, say, where the Pods do run); nothing is then stopped in
// that cluster, and the PodService objects stay.
import { MissingBinariesError } from '../src/testing/index.js'
import { setUpLocalPodService, Steps } from '../examples/podservice/local.js'
import type { LocalPodService } from '../examples/podservice/local.js'

const out = (text: string): void => {
  process.stdout.write(`${text}\n`)
}

let local: LocalPodService | undefined
let stopping = false
// startControlPlane registers its own SIGINT/SIGTERM handlers for a local control plane: they
// stop its processes, then exit (130/143). This script's handlers then only stop the engine and
// the hook; an exit here, before the control plane is down, could leave its processes running.
let planeHandlesSignals = false

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping || local === undefined) return
  stopping = true
  out(
    `\n${signal}: stopping the engine and the hook` +
      (planeHandlesSignals ? ', then the control plane...' : ' (the cluster keeps running)...')
  )
  if (planeHandlesSignals) {
    await local.stack.stop().catch(() => undefined)
    return
  }
  await local.stop()
  out('Stopped.')
  process.exit(0)
}

try {
  const existing = process.env['METACTL_USE_EXISTING_CLUSTER'] === '1'
  local = await setUpLocalPodService(new Steps(3), { useExistingCluster: existing })
  // Registered once everything runs: until then the control plane's own handlers (or the
  // default action, before it starts) take care of a Ctrl-C.
  planeHandlesSignals = process.listenerCount('SIGINT') > 0
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      void shutdown(signal)
    })
  }
  const ns = local.namespace
  out('\nThe PodService controller is running: the engine and the hook, in this process.')
  if (!existing) {
    out('The cluster has one simulated node (KWOK): Pods are scheduled and reported Running and')
    out(
      'Ready, but no container really runs; for a real cluster see examples/podservice/README.md.'
    )
  }
  out('\nIn another terminal:')
  out(`  export KUBECONFIG=${local.plane.kubeconfigPath}`)
  out(`  kubectl get podservices,pods,services -n ${ns}`)
  out(`  kubectl get podservice nginx -n ${ns} -o jsonpath='{.status}'; echo`)
  out(
    `  kubectl patch podservice nginx -n ${ns} --type merge -p '{"spec":{"image":"nginx:1.27-alpine"}}'`
  )
  out(`  kubectl patch podservice nginx -n ${ns} --type merge -p '{"spec":{"port":8080}}'`)
  out(
    `  kubectl patch podservice nginx -n ${ns} --type merge -p '{"spec":{"port":70000}}'   # refused`
  )
  out(`  kubectl delete podservice nginx -n ${ns}      # the Pod and the Service go too`)
  out('  kubectl apply -f examples/podservice/sample.yaml')
  out('\nPress Ctrl-C to stop everything.')
} catch (error) {
  process.stderr.write(
    `\nmake run failed: ${error instanceof Error ? error.message : String(error)}\n`
  )
  if (error instanceof MissingBinariesError) {
    process.stderr.write('Build the control-plane binaries first: make controlplane\n')
  }
  // setUpLocalPodService has already stopped what it started.
  process.exit(1)
}
