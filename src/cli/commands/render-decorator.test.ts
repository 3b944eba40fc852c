import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { renderWorkspace } from '../../../test/support/render-workspace.js'

const { file, render, remove } = renderWorkspace('metactl-render-dc-')

const controller = file(
  'dc.yaml',
  `apiVersion: metacontroller.k8s.io/v1alpha1
kind: DecoratorController
metadata: { name: netpol }
spec:
  resources:
    - apiVersion: example.com/v1
      resource: gadgets
      annotationSelector: { matchExpressions: [{ key: protect, operator: Exists }] }
  attachments:
    - { apiVersion: networking.k8s.io/v1, resource: networkpolicies, updateStrategy: { method: InPlace } }
  hooks: { sync: { webhook: { url: http://hooks.example/sync } } }
`
)
const target = file(
  'target.yaml',
  `apiVersion: example.com/v1
kind: Gadget
metadata: { name: g, namespace: ns, uid: uid-g, labels: { old: x, keep: y }, annotations: { protect: "yes" } }
`
)
const observed = file(
  'observed.yaml',
  `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: stale
  namespace: ns
  uid: uid-stale
  annotations: { metacontroller.k8s.io/decorator-controller: netpol }
  ownerReferences: [{ apiVersion: example.com/v1, kind: Gadget, name: g, uid: uid-g, controller: true }]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: someone-elses, namespace: ns }
`
)
const hook = file(
  'hook.mjs',
  `export function sync(request) {
  return {
    labels: { protected: 'true', old: null },
    annotations: {},
    status: { attachments: Object.keys(request.attachments) },
    attachments: [
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: request.object.metadata.name }, spec: { podSelector: {} } },
    ],
  }
}
`
)

after(() => {
  remove()
})

describe('metactl render for a DecoratorController', () => {
  it('plans attachments with the marker annotation, deletes stale ones and shows the target changes', async () => {
    const result = await render(
      '--controller',
      controller,
      '--parent',
      target,
      '--observed',
      observed,
      '--hook-module',
      hook,
      '--output',
      'json'
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    const out = JSON.parse(result.out.join('\n')) as {
      desired: {
        metadata: { name: string; namespace: string; annotations: Record<string, string> }
      }[]
      plan: { create: { key: string }[]; delete: { key: string }[] }
      target: { metadata: { labels: Record<string, string> }; status: unknown }
    }
    const [desired] = out.desired
    assert.ok(desired !== undefined && out.desired.length === 1)
    assert.equal(desired.metadata.namespace, 'ns')
    assert.equal(
      desired.metadata.annotations['metacontroller.k8s.io/decorator-controller'],
      'netpol'
    )
    assert.deepEqual(
      out.plan.create.map((e) => e.key),
      ['ns/g']
    )
    assert.deepEqual(
      out.plan.delete.map((e) => e.key),
      ['ns/stale']
    )
    assert.deepEqual(out.target.metadata.labels, { keep: 'y', protected: 'true' })
    assert.deepEqual(out.target.status, { attachments: ['NetworkPolicy.networking.k8s.io/v1'] })
    assert.match(result.err.join('\n'), /someone-elses .* is left out/)
  })

  it('prints the target changes as comments in the YAML output', async () => {
    const result = await render(
      '--controller',
      controller,
      '--parent',
      target,
      '--hook-module',
      hook
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    const text = result.out.join('\n')
    assert.match(text, /# Target: updated/)
    assert.match(text, /# Labels:\n# {3}protected: "true"\n# {3}- old/)
    assert.match(text, /# {3}create {5}NetworkPolicy.networking.k8s.io\/v1 ns\/g/)
  })

  it("plans nothing for a target no resource rule's selectors select, and says why", async () => {
    const plain = file(
      'plain.yaml',
      'apiVersion: example.com/v1\nkind: Gadget\nmetadata: { name: p, namespace: ns }\n'
    )
    const result = await render(
      '--controller',
      controller,
      '--parent',
      plain,
      '--hook-module',
      hook
    )
    assert.equal(result.code, 0)
    assert.equal(result.out.length, 1)
    assert.match(
      result.out[0] ?? '',
      /^# Nothing planned: the engine does not sync Gadget ns\/p \(example\.com\/v1\): its labels and annotations match no resource rule's selectors \(\{"annotationSelector":\{"matchExpressions":\[\{"key":"protect","operator":"Exists"\}\]\}\}\)$/
    )
    const finalizing = await render(
      '--controller',
      controller,
      '--parent',
      plain,
      '--hook-module',
      hook,
      '--finalizing'
    )
    assert.equal(finalizing.code, 0, finalizing.err.join('\n'))
    assert.doesNotMatch(finalizing.out.join('\n'), /Nothing planned/)
  })
})
