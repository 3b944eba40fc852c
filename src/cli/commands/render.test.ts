import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { renderWorkspace } from '../../../test/support/render-workspace.js'

const { file, render, remove } = renderWorkspace('metactl-render-')

const controller = file(
  'cc.yaml',
  `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: { name: gadgets }
spec:
  parentResource: { apiVersion: example.com/v1, resource: gadgets }
  childResources:
    - { apiVersion: example.com/v1, resource: gadgetparts, updateStrategy: { method: InPlace } }
    - { apiVersion: rbac.authorization.k8s.io/v1, resource: clusterroles }
  hooks: { sync: { webhook: { url: http://hooks.example/sync } } }
`
)
const parent = file(
  'parent.yaml',
  `apiVersion: example.com/v1
kind: Gadget
metadata: { name: g, namespace: ns, uid: uid-g }
spec: { selector: { matchLabels: { app: g } } }
`
)
const hook = file(
  'hook.mjs',
  `export const requests = []
export function sync(request) {
  return {
    status: { types: Object.keys(request.children).sort() },
    children: [
      { apiVersion: 'example.com/v1', kind: 'GadgetPart', metadata: { name: 'p', labels: { app: 'g' } } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r', labels: { app: 'g' } } },
    ],
  }
}
export default sync
`
)

after(() => {
  remove()
})

describe('metactl render', () => {
  it('guesses a kind no observed object names, then takes the one the hook returns', async () => {
    const result = await render(
      '--controller',
      controller,
      '--parent',
      parent,
      '--hook-module',
      hook
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    assert.deepEqual(result.err, [
      'warning: the request keyed childResources[0] (example.com/v1 gadgetparts) as ' +
        'Gadgetpart.example.com/v1, guessed from the resource, but the hook returned kind ' +
        'GadgetPart; pass an observed GadgetPart to key the request right',
    ])
    const text = result.out.join('\n')
    assert.match(text, /^# {3}create {5}GadgetPart\.example\.com\/v1 ns\/p$/m)
    // A well-known cluster-scoped kind gets no namespace, and is keyed by name.
    assert.match(text, /^# {3}create {5}ClusterRole\.rbac\.authorization\.k8s\.io\/v1 r$/m)
    assert.match(
      text,
      /^# {3}types:\n# {5}- ClusterRole\.rbac\.authorization\.k8s\.io\/v1\n# {5}- Gadgetpart\.example\.com\/v1$/m
    )
  })

  it('keys the request by observed kinds, warns about children the selector misses', async () => {
    const observed = file(
      'observed.yaml',
      `apiVersion: example.com/v1
kind: GadgetPart
metadata: { name: p, labels: { app: g }, annotations: { metacontroller.k8s.io/last-applied-configuration: '[1]' } }
---
apiVersion: example.com/v1
kind: GadgetPart
metadata: { name: stray, namespace: ns, labels: { app: other } }
`
    )
    const result = await render(
      '--controller',
      controller,
      '--parent',
      parent,
      '--observed',
      observed,
      '--hook-module',
      `${hook}#default`,
      '--output',
      'json'
    )
    assert.deepEqual(result.err, [
      'warning: observed GadgetPart ns/stray (example.com/v1) is left out: its labels do not ' +
        "match the parent's selector, so the engine would not adopt it",
      'metactl: 1 child cannot be written; see the plan',
    ])
    assert.equal(result.code, 1, 'a plan that cannot be carried out fails, after printing')
    const output = JSON.parse(result.out.join('\n')) as {
      status: { types: string[] }
      plan: {
        failed: { type: string; key: string; error: string }[]
        delete: { type: string; key: string }[]
      }
    }
    assert.deepEqual(output.status.types, [
      'ClusterRole.rbac.authorization.k8s.io/v1',
      'GadgetPart.example.com/v1',
    ])
    assert.deepEqual(
      output.plan.failed.map((e) => `${e.type} ${e.key}`),
      ['GadgetPart.example.com/v1 ns/p']
    )
    assert.match(output.plan.failed[0]?.error ?? '', /last-applied-configuration/)
    assert.deepEqual(output.plan.delete, [], 'a child the engine would not claim is not deleted')
  })

  it('rejects a parent without a selector when the controller generates none', async () => {
    const bare = file(
      'bare.yaml',
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: { name: g, namespace: ns }\n'
    )
    const result = await render('--controller', controller, '--parent', bare, '--hook-module', hook)
    assert.equal(result.code, 1)
    assert.match(result.err.join('\n'), /\.spec\.selector must have either matchLabels/)
  })
})

describe('metactl render with real inputs (kubectl output, CRDs)', () => {
  const website = file(
    'website-cc.yaml',
    `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: { name: sites }
spec:
  generateSelector: true
  parentResource: { apiVersion: example.com/v1, resource: websites }
  childResources:
    - { apiVersion: v1, resource: configmaps, updateStrategy: { method: InPlace } }
    - { apiVersion: example.com/v1, resource: pagesets }
  hooks: { sync: { webhook: { url: http://hooks.example/sync } } }
`
  )
  const siteHook = file(
    'site-hook.mjs',
    `export function sync(request) {
  return {
    status: { seen: Object.values(request.children).flatMap((m) => Object.keys(m)).sort() },
    children: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pages' }, data: { a: '1' } },
      { apiVersion: 'example.com/v1', kind: 'PageSet', metadata: { name: 'set' } },
    ],
  }
}
`
  )
  const crd = file(
    'crds.yaml',
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: websites.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: websites, kind: Website }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [port]
              properties: { port: { type: integer } }
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: pagesets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: pagesets, kind: PageSet }
  versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }]
`
  )
  // A parent as saved from a sample (no uid), and its children as \`kubectl get -o yaml\` prints
  // them: one List, owned by the parent's uid in the cluster they were read from.
  const sample = file(
    'site.yaml',
    'apiVersion: example.com/v1\nkind: Website\nmetadata: { name: s, namespace: web }\nspec: { port: 80 }\n'
  )
  const owner =
    '{ apiVersion: example.com/v1, kind: Website, name: s, uid: uid-live, controller: true }'
  const list = file(
    'kubectl-get.yaml',
    `apiVersion: v1
kind: List
metadata: { resourceVersion: "" }
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: pages
      namespace: web
      uid: uid-pages
      labels: { controller-uid: uid-live }
      ownerReferences: [${owner}]
    data: { a: '0' }
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: old
      namespace: web
      uid: uid-old
      labels: { controller-uid: uid-live }
      ownerReferences: [${owner}]
`
  )

  it('reads a List of observed children, and a parent without uid claims the children it owns', async () => {
    const result = await render(
      '--controller',
      website,
      '--parent',
      sample,
      '--observed',
      list,
      '--hook-module',
      siteHook,
      '--crd',
      crd
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    assert.deepEqual(result.err, [], 'the CRD names the PageSet kind: nothing is guessed')
    const text = result.out.join('\n')
    assert.match(text, /^# {3}update {5}ConfigMap\.v1 web\/pages \(InPlace\)$/m)
    assert.match(text, /^# {3}delete {5}ConfigMap\.v1 web\/old$/m)
    assert.match(text, /^# {3}create {5}PageSet\.example\.com\/v1 web\/set$/m)
    assert.match(text, /^# {3}seen:\n# {5}- web\/old\n# {5}- web\/pages$/m)
    assert.match(text, /controller-uid: uid-live/, 'the parent took the uid its children name')
  })

  it('rejects a parent that breaks its CRD schema, in the API server words', async () => {
    const bad = file(
      'bad-site.yaml',
      'apiVersion: example.com/v1\nkind: Website\nmetadata: { name: s, namespace: web }\nspec: { port: eighty }\n'
    )
    const result = await render(
      '--controller',
      website,
      '--parent',
      bad,
      '--hook-module',
      siteHook,
      '--crd',
      crd
    )
    assert.equal(result.code, 1)
    assert.deepEqual(result.out, [])
    assert.deepEqual(result.err, [
      'metactl: --parent: Website.example.com "s" is invalid: spec.port: Invalid value: "string": must be of type integer',
    ])
  })
})

describe('metactl render --finalizing', () => {
  const finalizer = file(
    'finalize-hook.mjs',
    `export function finalize(request) {
  const done = request.parent.metadata.labels?.done === 'yes'
  return { status: { finalizing: request.finalizing }, children: [], finalized: done }
}
`
  )
  const fixtures = 'test/fixtures/render'
  const args = (parentFile: string): string[] => [
    '--controller',
    `${fixtures}/controller.yaml`,
    '--parent',
    parentFile,
    '--observed',
    `${fixtures}/observed.yaml`,
    '--hook-module',
    finalizer,
    '--finalizing',
  ]

  it('calls finalize for a deleting parent, whose children go while the finalizer holds', async () => {
    const result = await render(...args(`${fixtures}/parent.yaml`))
    assert.equal(result.code, 0, result.err.join('\n'))
    const plan = result.out.filter((line) => /^# {3}(delete|skip)/.test(line))
    assert.deepEqual(plan, [
      '#   delete     Pod.v1 demo/shop-web',
      '#   delete     Service.v1 demo/shop',
      '#   skip       Pod.v1 demo/shop-old (being deleted)',
    ])
    assert.ok(result.out.includes('#   finalizing: true'))
  })

  it('leaves the children to the garbage collector once finalize says finalized', async () => {
    const done = file(
      'done-parent.yaml',
      'apiVersion: example.com/v1\nkind: Website\nmetadata: { name: shop, namespace: demo, labels: { done: "yes" } }\nspec: { image: x, port: 80 }\n'
    )
    const result = await render(...args(done))
    assert.equal(result.code, 0, result.err.join('\n'))
    assert.ok(
      result.out.includes(
        '#   nothing: the parent is released, the garbage collector deletes its children'
      ),
      result.out.join('\n')
    )
    assert.ok(!result.out.some((line) => line.startsWith('#   delete')))
  })
})

describe('metactl render input errors', () => {
  it('names the file of an observed object without a name or a namespace to put it in', async () => {
    const clusterParent = file(
      'cluster-parent.yaml',
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: { name: g }\nspec: { selector: { matchLabels: { app: g } } }\n'
    )
    const noName = file(
      'no-name.yaml',
      'apiVersion: example.com/v1\nkind: GadgetPart\nmetadata: {}\n'
    )
    const noNamespace = file(
      'no-namespace.yaml',
      'apiVersion: example.com/v1\nkind: GadgetPart\nmetadata: { name: p }\n'
    )
    const run = (observed: string) =>
      render(
        '--controller',
        controller,
        '--parent',
        clusterParent,
        '--observed',
        observed,
        '--hook-module',
        hook
      )
    assert.deepEqual((await run(noName)).err, [
      `metactl: --observed ${noName}: a GadgetPart has no metadata.name`,
    ])
    assert.deepEqual((await run(noNamespace)).err, [
      `metactl: --observed ${noNamespace}: GadgetPart p (example.com/v1) has no namespace, and the parent none to give`,
    ])
  })
})
