// The authoring tools against the engine on the real control plane, for every controller shape
// (the e2e half of src/cli/commands/authoring-matrix.test.ts): a namespaced and a cluster-scoped
// custom parent, a cluster-scoped (Namespace) and a namespaced (Service) built-in one, under a
// CompositeController and a DecoratorController each. `metactl run` calls one serveHooks server
// (every CRD given as `parentCrd`, so each route checks its own kind's schema); where the engine's
// child lands is the answer the callHook helpers and `metactl render` (metactl dev's hook lookup
// and in-process adapter) must give for the live parent the API server returned.
//
// The plane is this test's own: its controllers sync every Namespace and Service of the cluster.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { callCompositeHook, callDecoratorHook, serveHooks } from 'metacontroller-ts'
import type { KubeObject } from 'metacontroller-ts'
import { CONFIGMAPS, NAMESPACES, SERVICES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { metacontrollerCrdFiles, startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { crdFixture } from '../support/crd-fixture.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'
import { hookExportName } from '../../src/sdk/hook-exports.js'

const schema = { type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } }
const THING_CRD = withStatus(
  crdFixture({ kind: 'Thing', plural: 'things', scope: 'Namespaced', schema })
)
const TENANT_CRD = withStatus(
  crdFixture({ kind: 'Tenant', plural: 'tenants', scope: 'Cluster', schema })
)
/** A CompositeController's parent needs the status subresource (upstream refuses one without). */
function withStatus(crd: KubeObject): KubeObject {
  const spec = crd['spec'] as { versions: Record<string, unknown>[] }
  return {
    ...crd,
    spec: { ...spec, versions: spec.versions.map((v) => ({ ...v, subresources: { status: {} } })) },
  }
}
const ref = (group: string, resource: string, namespaced: boolean): ResourceRef => ({
  group,
  version: 'v1',
  resource,
  namespaced,
})

interface Shape {
  readonly id: string
  readonly name: string
  readonly apiVersion: string
  readonly resource: ResourceRef
  readonly crd?: KubeObject
  /** Where the parent is (namespace and name), made by `before` unless the cluster has it. */
  readonly namespace?: string
  readonly parentName: string
  readonly create?: KubeObject
}

const SHAPES: readonly Shape[] = [
  {
    id: 'thing',
    name: 'namespaced custom parent',
    apiVersion: 'example.com/v1',
    resource: ref('example.com', 'things', true),
    crd: THING_CRD,
    namespace: 'matrix',
    parentName: 'a',
    create: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec: {} },
  },
  {
    id: 'tenant',
    name: 'cluster-scoped custom parent',
    apiVersion: 'example.com/v1',
    resource: ref('example.com', 'tenants', false),
    crd: TENANT_CRD,
    parentName: 'acme',
    create: { apiVersion: 'example.com/v1', kind: 'Tenant', metadata: { name: 'acme' }, spec: {} },
  },
  {
    id: 'namespace',
    name: 'built-in cluster-scoped target (Namespace)',
    apiVersion: 'v1',
    resource: NAMESPACES,
    parentName: 'team-a',
  },
  {
    id: 'service',
    name: 'built-in namespaced target (Service)',
    apiVersion: 'v1',
    resource: SERVICES,
    namespace: 'matrix',
    parentName: 'web',
    create: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }] },
    },
  },
]

const KINDS = ['CompositeController', 'DecoratorController'] as const
type Kind = (typeof KINDS)[number]

const controllerName = (kind: Kind, shape: Shape): string =>
  `matrix-${kind === 'CompositeController' ? 'c' : 'd'}-${shape.id}`

/**
 * The hook of every cell: one ConfigMap named after its controller, with no namespace under a
 * namespaced parent and, under a cluster-scoped one, in the Namespace named like the parent.
 */
function childOf(controller: string, parent: KubeObject): KubeObject {
  const namespace = parent.metadata.namespace === undefined ? parent.metadata.name : undefined
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `made-${controller}`, ...(namespace === undefined ? {} : { namespace }) },
    data: {},
  }
}

function controllerOf(kind: Kind, shape: Shape, hookUrl: string): KubeObject {
  const rule = { apiVersion: shape.apiVersion, resource: shape.resource.resource }
  const configmaps = [{ apiVersion: 'v1', resource: 'configmaps' }]
  const spec =
    kind === 'CompositeController'
      ? { parentResource: rule, childResources: configmaps, generateSelector: true }
      : { resources: [rule], attachments: configmaps }
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind,
    metadata: { name: controllerName(kind, shape) },
    spec: { ...spec, hooks: { sync: { webhook: { url: hookUrl } } } },
  }
}

const COMPOSITES: ResourceRef = {
  ...ref('metacontroller.k8s.io', 'compositecontrollers', false),
  version: 'v1alpha1',
}
const DECORATORS: ResourceRef = { ...COMPOSITES, resource: 'decoratorcontrollers' }

describe('the authoring tools agree with the engine on every controller shape', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-matrix-e2e-'))
  let plane: ControlPlane
  let engine: SpawnedEngine | undefined
  let closeHooks: (() => Promise<void>) | undefined
  let hookUrl = ''

  before(async () => {
    plane = await startControlPlane({
      useExistingCluster: false,
      nodes: 0,
      crds: [...metacontrollerCrdFiles(), THING_CRD, TENANT_CRD],
    })
    const { client } = plane
    for (const name of ['matrix', 'acme', 'team-a']) {
      await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
    }
    for (const shape of SHAPES) {
      if (shape.create === undefined) continue
      const metadata = {
        ...shape.create.metadata,
        ...(shape.namespace ? { namespace: shape.namespace } : {}),
      }
      await client.create(shape.resource, { ...shape.create, metadata })
    }
    const routes: Record<string, (request: never) => unknown> = {}
    for (const kind of KINDS) {
      for (const shape of SHAPES) {
        const name = controllerName(kind, shape)
        routes[`/${name}`] =
          kind === 'CompositeController'
            ? (request: { parent: KubeObject }) => ({ children: [childOf(name, request.parent)] })
            : (request: { object: KubeObject }) => ({
                attachments: [childOf(name, request.object)],
              })
      }
    }
    const server = await serveHooks(routes, {
      port: 0,
      parentCrd: [THING_CRD, TENANT_CRD],
      log: () => undefined,
    })
    closeHooks = () => server.close()
    hookUrl = server.url
    engine = spawnEngine(plane.kubeconfigPath, ['--workers', '4'])
  })

  after(async () => {
    engine?.kill()
    await closeHooks?.()
    await plane.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The live parent, as the API server gives it to the engine. */
  async function liveParent(shape: Shape): Promise<KubeObject> {
    return plane.client.get(shape.resource, shape.parentName, {
      ...(shape.namespace === undefined ? {} : { namespace: shape.namespace }),
    })
  }

  /** Where the engine put the cell's child: `namespace/name`, once it exists. */
  async function engineAnswer(kind: Kind, shape: Shape, parent: KubeObject): Promise<string> {
    const child = childOf(controllerName(kind, shape), parent)
    const namespace = child.metadata.namespace ?? parent.metadata.namespace ?? ''
    const name = child.metadata.name ?? ''
    const made = await waitFor(
      async () => plane.client.get(CONFIGMAPS, name, { namespace }).catch(() => undefined),
      { timeoutMs: 60_000, description: `${kind} ${controllerName(kind, shape)}'s child` }
    )
    const owner = made.metadata.ownerReferences?.find((o) => o.uid === parent.metadata.uid)
    assert.ok(
      owner,
      `the child is owned by ${parent.kind} ${parent.metadata.name}: ${JSON.stringify(made.metadata)} parent ${JSON.stringify(parent.metadata)}`
    )
    return `${namespace}/${name}`
  }

  // One kind at a time: a CompositeController releases every child its parent owns outside its
  // selector (upstream's claim rules), so beside a DecoratorController over the same parents it
  // would strip the attachments' ownerReferences.
  for (const kind of KINDS) {
    describe(kind, () => {
      const resource = kind === 'CompositeController' ? COMPOSITES : DECORATORS
      before(async () => {
        for (const shape of SHAPES) {
          const name = controllerName(kind, shape)
          await plane.client.create(resource, controllerOf(kind, shape, `${hookUrl}/${name}`))
        }
      })
      after(async () => {
        for (const shape of SHAPES) await plane.client.delete(resource, controllerName(kind, shape))
      })
      for (const shape of SHAPES) {
        it(`${kind} over a ${shape.name}: serveHooks, the callHook helper and render give the engine's answer`, async () => {
          const parent = await liveParent(shape)
          // serveHooks: the engine called it and applied what it answered.
          const engineKey = await engineAnswer(kind, shape, parent)

          const name = controllerName(kind, shape)
          const controller = controllerOf(kind, shape, 'http://hooks.example/sync')
          const helperChildren =
            kind === 'CompositeController'
              ? (
                  await callCompositeHook(
                    (request) => ({ children: [childOf(name, request.parent)] }),
                    { parent, controller, ...(shape.crd ? { parentCrd: shape.crd } : {}) }
                  )
                ).children
              : (
                  await callDecoratorHook(
                    (request) => ({ attachments: [childOf(name, request.object)] }),
                    { object: parent, controller, ...(shape.crd ? { objectCrd: shape.crd } : {}) }
                  )
                ).attachments
          const helperKeys = helperChildren.map(
            (c) =>
              `${c.metadata?.namespace ?? parent.metadata.namespace ?? ''}/${c.metadata?.name ?? ''}`
          )
          assert.deepEqual(helperKeys, [engineKey])

          const files = {
            controller: join(dir, `${name}.yaml`),
            parent: join(dir, `${name}-parent.yaml`),
            crd: join(dir, `${name}-crd.yaml`),
            hooks: join(dir, `${name}.mjs`),
          }
          writeFileSync(files.controller, stringify(controller))
          writeFileSync(files.parent, stringify(parent))
          if (shape.crd !== undefined) writeFileSync(files.crd, stringify(shape.crd))
          writeFileSync(
            files.hooks,
            `const childOf = ${childOf.toString()}\n` +
              `export const ${hookExportName(name)} = { sync: (request) => request.parent === undefined\n` +
              `  ? { attachments: [childOf(${JSON.stringify(name)}, request.object)] }\n` +
              `  : { children: [childOf(${JSON.stringify(name)}, request.parent)] } }\n`
          )
          const rendered = await metactl([
            'render',
            '--controller',
            files.controller,
            '--parent',
            files.parent,
            '--hook-module',
            files.hooks,
            ...(shape.crd === undefined ? [] : ['--crd', files.crd]),
            '--output',
            'json',
          ])
          assert.equal(rendered.code, 0, rendered.stderr)
          const plan = (JSON.parse(rendered.stdout) as { plan: { create: { key: string }[] } }).plan
          assert.deepEqual(
            plan.create.map((e) => e.key),
            [engineKey]
          )
        })
      }
    })
  }
})
