// `make demo`: the PodService example from start to finish on a local control plane, then
// everything stops. Non-interactive; exits 0 when every step worked, 1 (after stopping
// everything) when one did not.
//
// The engine runs in this process and the hook is served as a webhook on 127.0.0.1, exactly as
// `metactl run` and examples/podservice/server.ts would run them.
import { execFileSync } from 'node:child_process'
import { NotFoundError } from '../src/kube/index.js'
import { MissingBinariesError, waitFor } from '../src/testing/index.js'
import type { Pod, PodService, Service } from '../examples/podservice/hook.js'
import {
  describePodState,
  isInvalid,
  serverMessage,
  setUpLocalPodService,
  shortUid,
  Steps,
  tree,
  watchPodStates,
} from '../examples/podservice/local.js'
import type { LocalPodService } from '../examples/podservice/local.js'
import { INGRESSES, PODS, PODSERVICES, SERVICES } from '../examples/podservice/stack.js'
import { showNetworkPolicyDecorator } from '../examples/podservice-netpol/demo-step.js'
import type { ResourceRef } from '../src/kube/index.js'

const out = (text: string): void => {
  process.stdout.write(`${text}\n`)
}
const SIMULATED =
  'the local cluster has one simulated node (KWOK): Pods are scheduled and reported Running ' +
  'and Ready, but no container really runs (no image pull, no traffic).'
const REAL_CLUSTER =
  'To run them for real (containers, the engine by its Helm chart, an Ingress): make demo-real (root).'
const NEW_IMAGE = 'nginx:1.27-alpine'

async function main(world: { local?: LocalPodService }): Promise<void> {
  const steps = new Steps(10)
  out('PodService demo: a Metacontroller CompositeController with a TypeScript hook.')
  out(`Note: ${SIMULATED}`)
  out(`      ${REAL_CLUSTER}`)

  const local = await setUpLocalPodService(steps, { useExistingCluster: false })
  world.local = local
  const { plane, namespace } = local
  const client = plane.client
  const get = <T extends PodService | Pod | Service>(ref: ResourceRef): Promise<T> =>
    client.get<T>(ref, 'nginx', { namespace })
  const patchSpec = (spec: Record<string, unknown>): Promise<PodService> =>
    client.patch<PodService>(PODSERVICES, 'nginx', { spec }, { namespace, type: 'merge' })
  const waitUntil = <T>(
    what: string,
    condition: () => Promise<T | undefined | false>
  ): Promise<T> => waitFor(condition, { timeoutMs: 30_000, intervalMs: 100, description: what })
  const gone = async (ref: ResourceRef): Promise<boolean> => {
    try {
      await get(ref)
      return false
    } catch (error) {
      if (error instanceof NotFoundError) return true
      throw error
    }
  }
  const printTree = async (): Promise<void> => {
    for (const line of await tree(client, namespace)) steps.line(line)
  }

  steps.start(`kubectl get podservices -n ${namespace} (the CRD's printer columns)`)
  steps.line(`$ kubectl get podservices -n ${namespace}`)
  try {
    const table = execFileSync(
      'kubectl',
      ['--kubeconfig', plane.kubeconfigPath, 'get', 'podservices', '-n', namespace],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }
    )
    for (const line of table.trimEnd().split('\n')) steps.line(line)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    steps.line(
      code === 'ENOENT'
        ? '(kubectl is not installed; skipped)'
        : `(kubectl failed: ${error instanceof Error ? (error.message.split('\n')[0] ?? '') : ''})`
    )
  }
  steps.done()

  steps.start(`New image ${NEW_IMAGE}: the Pod is recreated (updateStrategy Recreate)`)
  const oldPod = await get<Pod>(PODS)
  const serviceBefore = await get<Service>(SERVICES)
  // Watched from before the patch, so every state of the new Pod is seen, however brief.
  const states = watchPodStates(
    client,
    namespace,
    'nginx',
    oldPod.metadata.resourceVersion ?? '',
    (pod) => pod.spec?.containers[0]?.image === NEW_IMAGE,
    (state) => state.ready
  )
  states.catch(() => undefined)
  await patchSpec({ image: NEW_IMAGE })
  steps.line(`patched spec.image (was ${oldPod.spec?.containers[0]?.image ?? '?'})`)
  const seen = await states
  const newPod = await get<Pod>(PODS)
  steps.line(`Pod nginx: old uid ${oldPod.metadata.uid ?? '?'}`)
  steps.line(`           new uid ${newPod.metadata.uid ?? '?'} (a new Pod)`)
  steps.line(`new Pod, as a watch saw it: ${seen.map(describePodState).join(' → ')}`)
  const parentAfterImage = await waitUntil('the PodService Ready True again', async () => {
    const parent = await get<PodService>(PODSERVICES)
    const ready = parent.status?.conditions?.find((c) => c.type === 'Ready')
    return ready?.status === 'True' &&
      parent.status?.observedGeneration === parent.metadata.generation
      ? ready
      : undefined
  })
  steps.line(`PodService nginx: Ready ${parentAfterImage.status} (${parentAfterImage.reason})`)
  const serviceAfterImage = await get<Service>(SERVICES)
  const serviceWritten =
    serviceBefore.metadata.resourceVersion !== serviceAfterImage.metadata.resourceVersion
  steps.line(
    `Service nginx untouched: uid ${shortUid(serviceAfterImage)}…, resourceVersion ` +
      (serviceWritten ? 'changed' : 'unchanged')
  )
  steps.done()

  steps.start('New port 8080: the Service is updated in place (updateStrategy InPlace)')
  await patchSpec({ port: 8080 })
  steps.line('patched spec.port (was 80)')
  const movedService = await waitUntil('the Service on port 8080', async () => {
    const service = await get<Service>(SERVICES)
    return service.spec?.ports?.[0]?.port === 8080 ? service : undefined
  })
  steps.line(`Service nginx: uid before ${serviceBefore.metadata.uid ?? '?'}`)
  steps.line(
    `               uid after  ${movedService.metadata.uid ?? '?'} ` +
      `(${movedService.metadata.uid === serviceBefore.metadata.uid ? 'the same object' : 'a NEW object?!'}), ` +
      `port ${String(serviceBefore.spec?.ports?.[0]?.port ?? '?')} → ${String(movedService.spec?.ports?.[0]?.port ?? '?')}, ` +
      `clusterIP ${movedService.spec?.clusterIP ?? '?'} kept`
  )
  steps.line('(the Pod is recreated too: its containerPort changed)')
  // The recreated Pod runs again before the status is shown, so the tree is the settled one.
  await waitUntil('the status address on port 8080 and Ready True', async () => {
    const parent = await get<PodService>(PODSERVICES)
    const ready = parent.status?.conditions?.find((c) => c.type === 'Ready')
    return (
      parent.status?.serviceAddress?.endsWith(':8080') === true &&
      parent.status.observedGeneration === parent.metadata.generation &&
      ready?.status === 'True'
    )
  })
  steps.line()
  await printTree()
  steps.done()

  steps.start('spec.ingress: an Ingress child appears (networking.k8s.io/v1, InPlace)')
  await patchSpec({ ingress: { host: 'nginx.example.com' } })
  steps.line('patched spec.ingress to { host: nginx.example.com }')
  await waitUntil('the Ingress and status.ingresses', async () => {
    const parent = await get<PodService>(PODSERVICES)
    return parent.status?.ingresses === 1
  })
  await printTree()
  await patchSpec({ ingress: null })
  await waitUntil('the Ingress to be deleted', () => gone(INGRESSES))
  steps.line('removed spec.ingress: the Ingress is deleted')
  steps.done()

  await showNetworkPolicyDecorator(steps, local)

  steps.start('Invalid specs are refused by the API server (CRD schema and CEL rules)')
  const attempts: [string, Record<string, unknown>][] = [
    ['port 70000', { port: 70000 }],
    ['cpuReq 200m above cpuLimit 100m', { cpuReq: '200m' }],
    ['memLimit "lots"', { memLimit: 'lots' }],
  ]
  for (const [what, spec] of attempts) {
    try {
      await patchSpec(spec)
      throw new Error(`the API server accepted ${what}; the CRD's validation is missing`)
    } catch (error) {
      if (!isInvalid(error)) throw error
      steps.line(`${what}:`)
      for (const line of serverMessage(error).split('\n')) steps.line(`  ${line}`)
    }
  }
  const unchanged = await get<PodService>(PODSERVICES)
  steps.line(
    `the PodService is unchanged (generation ${String(unchanged.metadata.generation ?? '?')})`
  )
  steps.done()

  steps.start('Delete the PodService: the garbage collector deletes its Pod and Service')
  const pod = await get<Pod>(PODS)
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller === true)
  steps.line(`Pod nginx is owned by ${owner?.kind ?? '?'} ${owner?.name ?? '?'} (controller ref)`)
  const deleted = Date.now()
  await client.delete(PODSERVICES, 'nginx', { namespace })
  steps.line('podservice.homelabz.com.br/nginx deleted')
  for (const [label, ref] of [
    ['Pod nginx', PODS],
    ['Service nginx', SERVICES],
  ] as const) {
    await waitUntil(`${label} to be garbage-collected`, () => gone(ref))
    steps.line(`${label}: gone ${((Date.now() - deleted) / 1000).toFixed(1)} s after the delete`)
  }
  steps.done()

  out(`\nAll steps passed in ${steps.elapsed}.`)
  out(`Reminder: ${SIMULATED}`)
  out(`          ${REAL_CLUSTER}`)
}

const world: { local?: LocalPodService } = {}
let code = 0
try {
  await main(world)
} catch (error) {
  code = 1
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`\ndemo failed: ${message}\n`)
  if (error instanceof MissingBinariesError) {
    process.stderr.write('Build the control-plane binaries first: make controlplane\n')
  }
}
out('\nStopping the engine, the hook and the control plane...')
await world.local?.stop()
out(code === 0 ? 'Done; nothing is left running.' : 'Stopped; nothing is left running.')
process.exit(code)
