// The authoring tools against the engine's answer, for every controller shape: four parents (a
// namespaced and a cluster-scoped custom kind, a cluster-scoped and a namespaced built-in kind)
// under both controller kinds, through serveHooks, the callHook helpers and render (whose hook
// lookup and in-process adapter are metactl dev's). The engine's answer: the child is accepted
// and lands in the parent's namespace, or, under a cluster-scoped parent, in the one it names.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { crdFixture } from '../../../test/support/crd-fixture.js'
import type { KubeObject } from '../../core/kube-object.js'
import { callCompositeHook, callDecoratorHook } from '../../sdk/call-hook.js'
import { serveHooks } from '../../sdk/serve-hooks.js'
import { main } from '../main.js'

const dir = mkdtempSync(join(tmpdir(), 'metactl-matrix-'))
after(() => {
  rmSync(dir, { recursive: true, force: true })
})

// Both custom parents need only a spec, so a parent without one is refused.
const crd = (kind: string, plural: string, scope: 'Cluster' | 'Namespaced'): KubeObject =>
  crdFixture({
    kind,
    plural,
    scope,
    schema: { type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } },
  })

interface Shape {
  readonly name: string
  readonly parent: KubeObject
  readonly resource: string
  readonly crd?: KubeObject
  /** The namespace the engine puts the child in. */
  readonly childNamespace: string
}

const SHAPES: readonly Shape[] = [
  {
    name: 'namespaced custom parent',
    parent: {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
      spec: {},
    },
    resource: 'things',
    crd: crd('Thing', 'things', 'Namespaced'),
    childNamespace: 'ns',
  },
  {
    name: 'cluster-scoped custom parent',
    parent: {
      apiVersion: 'example.com/v1',
      kind: 'Tenant',
      metadata: { name: 'acme', uid: 'u2' },
      spec: {},
    },
    resource: 'tenants',
    crd: crd('Tenant', 'tenants', 'Cluster'),
    childNamespace: 'acme',
  },
  {
    name: 'built-in cluster-scoped target (Namespace)',
    parent: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', uid: 'u3' } },
    resource: 'namespaces',
    childNamespace: 'team-a',
  },
  {
    name: 'built-in namespaced target (Service)',
    parent: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'ns', uid: 'u4' },
    },
    resource: 'services',
    childNamespace: 'ns',
  },
]

/** The child each hook returns: in the parent's namespace, named only under a cluster-scoped one. */
function child(parent: { metadata: { name?: string; namespace?: string } }): KubeObject {
  const namespace = parent.metadata.namespace === undefined ? parent.metadata.name : undefined
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'made', ...(namespace === undefined ? {} : { namespace }) },
    data: {},
  }
}

const composite = (request: { parent: KubeObject }) => ({ children: [child(request.parent)] })
const decorator = (request: { object: KubeObject }) => ({ attachments: [child(request.object)] })

const KINDS = ['CompositeController', 'DecoratorController'] as const

function controllerOf(kind: (typeof KINDS)[number], shape: Shape): KubeObject {
  const rule = { apiVersion: shape.parent.apiVersion, resource: shape.resource }
  const configmaps = [{ apiVersion: 'v1', resource: 'configmaps' }]
  const spec =
    kind === 'CompositeController'
      ? { parentResource: rule, childResources: configmaps, generateSelector: true }
      : { resources: [rule], attachments: configmaps }
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind,
    metadata: { name: 'matrix-ctl' },
    spec: { ...spec, hooks: { sync: { webhook: { url: 'http://hooks.example/sync' } } } },
  }
}

const hookModule = join(dir, 'hooks.mjs')
writeFileSync(
  hookModule,
  `const child = ${child.toString()}
export const matrixCtl = {
  sync: (request) => request.parent === undefined
    ? { attachments: [child(request.object)] }
    : { children: [child(request.parent)] },
}
`
)

async function render(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(['node', 'metactl', 'render', ...args], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

for (const kind of KINDS) {
  for (const shape of SHAPES) {
    const expected = `${shape.childNamespace}/made`
    describe(`${kind} over a ${shape.name}`, () => {
      const controller = controllerOf(kind, shape)

      it('callHook helper: accepts the child where the engine puts it', async () => {
        const out =
          kind === 'CompositeController'
            ? (
                await callCompositeHook(composite, {
                  parent: shape.parent,
                  controller,
                  ...(shape.crd === undefined ? {} : { parentCrd: shape.crd }),
                })
              ).children
            : (
                await callDecoratorHook(decorator, {
                  object: shape.parent,
                  controller,
                  ...(shape.crd === undefined ? {} : { objectCrd: shape.crd }),
                })
              ).attachments
        assert.equal(out.length, 1)
      })

      it("serveHooks: answers, checking the parent against its own kind's CRD only", async () => {
        const crds = SHAPES.flatMap((s) => (s.crd === undefined ? [] : [s.crd]))
        const server = await serveHooks(
          { '/sync': composite, '/decorate': decorator },
          { port: 0, parentCrd: crds, log: () => undefined }
        )
        try {
          const path = kind === 'CompositeController' ? '/sync' : '/decorate'
          const key = kind === 'CompositeController' ? 'parent' : 'object'
          const post = (parent: unknown) =>
            fetch(`${server.url}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ [key]: parent }),
            })
          assert.equal((await post(shape.parent)).status, 200)
          const withoutSpec: Record<string, unknown> = { ...shape.parent }
          delete withoutSpec['spec']
          assert.equal((await post(withoutSpec)).status, shape.crd === undefined ? 200 : 422)
        } finally {
          await server.close()
        }
      })

      it("render (metactl dev's hook lookup): plans the child where the engine puts it", async () => {
        const files = {
          controller: join(dir, `${kind}-${shape.resource}-ctl.yaml`),
          parent: join(dir, `${kind}-${shape.resource}-parent.yaml`),
          crd: join(dir, `${shape.resource}-crd.yaml`),
        }
        writeFileSync(files.controller, stringify(controller))
        writeFileSync(files.parent, stringify(shape.parent))
        const crdArgs = shape.crd === undefined ? [] : ['--crd', files.crd]
        if (shape.crd !== undefined) writeFileSync(files.crd, stringify(shape.crd))
        const result = await render([
          '--controller',
          files.controller,
          '--parent',
          files.parent,
          '--hook-module',
          hookModule,
          ...crdArgs,
          '--output',
          'json',
        ])
        assert.equal(result.code, 0, result.err)
        const plan = (JSON.parse(result.out) as { plan: { create: { key: string }[] } }).plan
        assert.deepEqual(
          plan.create.map((e) => e.key),
          [expected]
        )
      })
    })
  }
}
