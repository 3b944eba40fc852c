// The controllers, parents and hooks of the e2e authoring matrix (test/e2e/authoring-matrix*.test.ts):
// four parent shapes (a namespaced and a cluster-scoped custom kind, a cluster-scoped and a
// namespaced built-in kind) under a CompositeController and a DecoratorController each, and the
// one hook every cell runs, whichever tool runs it (serveHooks, the callHook helpers, render's and
// dev's hook module).
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { hookExportName } from '../../src/sdk/hook-exports.js'
import { crdFixture } from './crd-fixture.js'

// The custom parents need a spec (so a parent without one is refused) and keep their status (so
// the status a CompositeController writes can be compared).
const schema = {
  type: 'object',
  required: ['spec'],
  properties: {
    spec: { type: 'object' },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
}

/** A CompositeController's parent needs the status subresource (upstream refuses one without). */
function withStatus(crd: KubeObject): KubeObject {
  const spec = crd['spec'] as { versions: Record<string, unknown>[] }
  return {
    ...crd,
    spec: { ...spec, versions: spec.versions.map((v) => ({ ...v, subresources: { status: {} } })) },
  }
}

/** The namespaced custom parent's CRD. */
export const THING_CRD = withStatus(
  crdFixture({ kind: 'Thing', plural: 'things', scope: 'Namespaced', schema })
)
/** The cluster-scoped custom parent's CRD. */
export const TENANT_CRD = withStatus(
  crdFixture({ kind: 'Tenant', plural: 'tenants', scope: 'Cluster', schema })
)

const ref = (group: string, resource: string, namespaced: boolean): ResourceRef => ({
  group,
  version: 'v1',
  resource,
  namespaced,
})

/** One parent shape of the matrix. */
export interface Shape {
  readonly id: string
  readonly name: string
  readonly apiVersion: string
  readonly resource: ResourceRef
  readonly crd?: KubeObject
  /** Where the parent is (namespace and name), made by the test unless the cluster has it. */
  readonly namespace?: string
  readonly parentName: string
  readonly create?: KubeObject
}

/** The Namespaces the shapes' parents and children live in, made before the parents. */
export const MATRIX_NAMESPACES = ['matrix', 'acme', 'team-a'] as const

/** The four parent shapes. */
export const SHAPES: readonly Shape[] = [
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
    resource: ref('', 'namespaces', false),
    parentName: 'team-a',
  },
  {
    id: 'service',
    name: 'built-in namespaced target (Service)',
    apiVersion: 'v1',
    resource: ref('', 'services', true),
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

/** The two controller kinds. */
export const KINDS = ['CompositeController', 'DecoratorController'] as const
/** One controller kind. */
export type Kind = (typeof KINDS)[number]

/** The cell's controller name: `matrix-c-thing`, `matrix-d-service`... */
export const controllerName = (kind: Kind, shape: Shape): string =>
  `matrix-${kind === 'CompositeController' ? 'c' : 'd'}-${shape.id}`

/**
 * The answer of every cell's sync hook, from the request alone (its source is written into the
 * hook modules of render and dev, so it names nothing outside itself). A CompositeController makes
 * one ConfigMap named after it and reports it in the status; a DecoratorController attaches one
 * Secret (a kind of its own: a CompositeController releases every ConfigMap its parent controls
 * outside its selector, so the two kinds could not share the parents otherwise) and labels the
 * target. Under a namespaced parent the object has no namespace; under a cluster-scoped one it
 * is in the Namespace named like the parent.
 */
export function matrixAnswer(
  controller: string,
  request: { readonly parent?: KubeObject; readonly object?: KubeObject }
): Record<string, unknown> {
  const parent = request.parent ?? request.object
  if (parent === undefined) throw new Error('a sync request has a parent or an object')
  const namespace = parent.metadata.namespace === undefined ? parent.metadata.name : undefined
  const metadata = { name: `made-${controller}`, ...(namespace === undefined ? {} : { namespace }) }
  if (request.parent !== undefined)
    return {
      children: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: {} }],
      status: { child: metadata.name },
    }
  return {
    attachments: [{ apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data: {} }],
    labels: { [`matrix.example.com/${controller}`]: 'yes' },
  }
}

/** The cell's child (or attachment) kind and where the engine puts it for `parent`. */
export function childKeyOf(
  kind: Kind,
  shape: Shape,
  parent: KubeObject
): { kind: string; namespace: string; name: string } {
  const name = controllerName(kind, shape)
  return {
    kind: kind === 'CompositeController' ? 'ConfigMap' : 'Secret',
    namespace: parent.metadata.namespace ?? parent.metadata.name ?? '',
    name: `made-${name}`,
  }
}

/** The cell's controller object, its hooks at `hookUrl` (a webhook; dev runs them in-process). */
export function controllerOf(kind: Kind, shape: Shape, hookUrl: string): KubeObject {
  const rule = { apiVersion: shape.apiVersion, resource: shape.resource.resource }
  const spec =
    kind === 'CompositeController'
      ? {
          parentResource: rule,
          childResources: [{ apiVersion: 'v1', resource: 'configmaps' }],
          generateSelector: true,
        }
      : { resources: [rule], attachments: [{ apiVersion: 'v1', resource: 'secrets' }] }
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind,
    metadata: { name: controllerName(kind, shape) },
    spec: { ...spec, hooks: { sync: { webhook: { url: hookUrl } } } },
  }
}

/**
 * A hook module (JavaScript, as `metactl render --hook-module` and `metactl dev --hooks` load it)
 * exporting `{ sync }` under each controller's name, each answering {@link matrixAnswer}.
 */
export function matrixHookModule(controllers: readonly string[]): string {
  return [
    `const matrixAnswer = ${matrixAnswer.toString()}`,
    ...controllers.map(
      (name) =>
        `export const ${hookExportName(name)} = { sync: (request) => matrixAnswer(${JSON.stringify(name)}, request) }`
    ),
    '',
  ].join('\n')
}
