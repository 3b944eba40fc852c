// The Helm chart takes upstream Metacontroller's chart values: every values file of upstream's
// chart CI (test/fixtures/upstream-examples/helm-ci, vendored unchanged) renders, each upstream
// value lands where upstream's chart puts it (`command`, `commandArgs`, `probes.port`,
// `clusterRole.rules` and `aggregationRule`, `service`, `podDisruptionBudget.maxUnavailable`), the
// StatefulSet mode gives upstream's names (StatefulSet `metacontroller`, Pod `metacontroller-0`),
// the API server accepts the result in a server-side dry run, and a value the chart cannot honour
// fails the render with its name and what to use instead. Skipped, with the reason, when helm is
// not built (tools/helm/build.sh).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import type { KubeObject } from '../../src/core/kube-object.js'
import { parseManifests, startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { NAMESPACES } from '../support/engine-fixture.js'
import { CHART, HELM, HELM_SKIP } from '../support/helm-binary.js'

const CI = 'test/fixtures/upstream-examples/helm-ci'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    })
  })
}

interface Container {
  command?: string[]
  args?: string[]
  ports?: { name: string; containerPort: number }[]
  securityContext?: Record<string, unknown>
}
type Workload = KubeObject & {
  spec: { serviceName?: string; replicas?: number; template: { spec: { containers: Container[] } } }
}

function find(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name)
  assert.ok(
    found,
    `${kind}/${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`).join(', ')}`
  )
  return found
}

describe("the Helm chart with upstream's values", { skip: HELM_SKIP }, () => {
  let plane: ControlPlane
  const namespace = `helm-up-${Date.now().toString(36)}`

  const template = async (...args: string[]): Promise<KubeObject[]> => {
    const result = await run(HELM, [
      'template',
      'metacontroller',
      CHART,
      '--namespace',
      namespace,
      ...args,
    ])
    assert.equal(result.code, 0, result.stderr)
    return parseManifests(result.stdout, `helm template ${args.join(' ')}`)
  }
  const values = (file: string): Record<string, unknown> =>
    parse(readFileSync(join(CI, file), 'utf8')) as Record<string, unknown>

  before(async () => {
    plane = await startControlPlane()
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('renders every values file of upstream chart CI, each upstream value where upstream puts it, and passes a dry run', async () => {
    const files = readdirSync(CI).filter((f) => f.endsWith('.yaml'))
    assert.ok(files.length >= 8, files.join(' '))
    for (const file of files) {
      const given = values(file) as {
        command?: string
        commandArgs?: string[]
        probes?: { port?: number }
        clusterRole?: { rules?: unknown[]; aggregationRule?: { clusterRoleSelectors?: unknown[] } }
        service?: { enabled?: boolean; ports?: unknown[] }
        securityContext?: Record<string, unknown>
      }
      const objects = await template('--values', join(CI, file))
      const workload = find(objects, 'Deployment', 'metacontroller') as Workload
      const [container] = workload.spec.template.spec.containers
      assert.ok(container)
      assert.deepEqual(container.command, [given.command], file)
      assert.deepEqual(container.args?.slice(0, given.commandArgs?.length), given.commandArgs, file)
      const health = container.ports?.find((p) => p.name === 'health')?.containerPort
      assert.equal(health, given.probes?.port ?? 8081, file)
      // Helm merges a given map into the chart's default: every given key is as given.
      for (const [key, value] of Object.entries(given.securityContext ?? {}))
        assert.deepEqual(container.securityContext?.[key], value, `${file}: securityContext.${key}`)
      const rules = given.clusterRole?.rules ?? []
      if (rules.length > 0)
        assert.deepEqual(
          find(objects, 'ClusterRole', 'metacontroller:extra-rules')['rules'],
          rules,
          file
        )
      const selectors = given.clusterRole?.aggregationRule?.clusterRoleSelectors ?? []
      const aggregated = find(objects, 'ClusterRole', 'metacontroller:controllers')[
        'aggregationRule'
      ] as {
        clusterRoleSelectors: unknown[]
      }
      assert.deepEqual(aggregated.clusterRoleSelectors.slice(1), selectors, file)
      const service = objects.find(
        (o) => o.kind === 'Service' && o.metadata.name === 'metacontroller'
      )
      if (given.service?.enabled === true)
        assert.deepEqual((service?.['spec'] as { ports: unknown }).ports, given.service.ports, file)
      else assert.equal(service, undefined, file)
      const dry = await runWithInput(
        plane.kubeconfigPath,
        ['apply', '--dry-run=server', '-f', '-'],
        objects.map((o) => JSON.stringify(o)).join('\n')
      )
      assert.equal(dry.code, 0, `${file}: ${dry.stderr}`)
    }
  })

  it('runs upstream-style as a StatefulSet named metacontroller, with Pods metacontroller-0, -1', async () => {
    const objects = await template(
      '--set',
      'workload=StatefulSet',
      '--values',
      join(CI, 'leader-election-values.yaml')
    )
    const set = find(objects, 'StatefulSet', 'metacontroller') as Workload
    assert.equal(set.spec.serviceName, '')
    assert.equal(set.spec.replicas, 2)
    assert.ok(!objects.some((o) => o.kind === 'Deployment'))
    const pdb = find(objects, 'PodDisruptionBudget', 'metacontroller')['spec'] as Record<
      string,
      unknown
    >
    assert.equal(
      pdb['minAvailable'],
      1,
      "upstream's maxUnavailable 0 is unset, as in upstream's chart"
    )
    const withMax = await template('--set', 'podDisruptionBudget.maxUnavailable=1')
    assert.deepEqual(
      Object.keys(find(withMax, 'PodDisruptionBudget', 'metacontroller')['spec'] as object).sort(),
      ['maxUnavailable', 'selector']
    )
    const yaml = objects.map((o) => JSON.stringify(o)).join('\n')
    const applied = await runWithInput(
      plane.kubeconfigPath,
      ['apply', '--dry-run=server', '-f', '-'],
      yaml
    )
    assert.equal(applied.code, 0, applied.stderr)
    assert.match(applied.stdout, /statefulset\.apps\/metacontroller created \(server dry run\)/)
  })

  it('refuses values it cannot honour, naming the value and what to use instead', async () => {
    for (const [set, message] of [
      ['no-such-value=1', /value "no-such-value" is not read by this chart/],
      ['commandArgs[0]=run', /drop the leading "run", or give metactl's arguments in args/],
      ['probes.path=/x', /probes\.path is not read: .*set ports\.health or probes\.port/],
      ['service.type=LoadBalancer', /service\.type is not read: .*use metrics\.service/],
      ['clusterRole.name=x', /clusterRole\.name is not read: use clusterRole\.rules/],
      ['workload=DaemonSet', /workload must be Deployment or StatefulSet/],
    ] as const) {
      const result = await run(HELM, ['template', 'x', CHART, '--set', set])
      assert.notEqual(result.code, 0, set)
      assert.match(result.stderr, message, set)
    }
  })
})

function runWithInput(kubeconfig: string, args: readonly string[], input: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
      }
    )
    child.stdin?.end(input)
  })
}
