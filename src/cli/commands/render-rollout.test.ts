import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { setLastApplied } from '../../engine/children/dynamic-apply.js'
import { renderWorkspace } from '../../../test/support/render-workspace.js'

const { file, render, remove } = renderWorkspace('metactl-render-rollout-')

/** Objects as a YAML stream (JSON documents are YAML). */
function stream(objects: readonly unknown[]): string {
  return objects.map((o) => JSON.stringify(o)).join('\n---\n')
}

const controller = file(
  'cc.yaml',
  `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: { name: gadgets }
spec:
  parentResource: { apiVersion: example.com/v1, resource: gadgets }
  childResources:
    - apiVersion: example.com/v1
      resource: gadgetparts
      updateStrategy:
        method: RollingRecreate
        statusChecks: { conditions: [{ type: Ready, status: "True" }] }
  hooks: { sync: { webhook: { url: http://hooks.example/sync } } }
`
)

const parent = {
  apiVersion: 'example.com/v1',
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'ns', uid: 'uid-g' },
  spec: { selector: { matchLabels: { app: 'g' } }, version: '2' },
}

const hook = file(
  'hook.mjs',
  `export default function sync(request) {
  return {
    status: {},
    children: ['p0', 'p1'].map((name) => ({
      apiVersion: 'example.com/v1',
      kind: 'GadgetPart',
      metadata: { name, labels: { app: 'g' } },
      data: { version: request.parent.spec.version },
    })),
  }
}
`
)

/** A part as the engine created it at `version`, Ready. */
function part(name: string, version: string): KubeObject {
  const created = setLastApplied({
    apiVersion: 'example.com/v1',
    kind: 'GadgetPart',
    metadata: { name, namespace: 'ns', labels: { app: 'g' } },
    data: { version },
  })
  return {
    ...created,
    metadata: {
      ...created.metadata,
      uid: `uid-${name}`,
      ownerReferences: [
        { apiVersion: 'example.com/v1', kind: 'Gadget', name: 'g', uid: 'uid-g', controller: true },
      ],
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }
}

const oldRevision = {
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'ControllerRevision',
  metadata: {
    name: 'gadgets.example.com-old',
    namespace: 'ns',
    ownerReferences: [
      { apiVersion: 'example.com/v1', kind: 'Gadget', name: 'g', uid: 'uid-g', controller: true },
    ],
  },
  parentPatch: { spec: { selector: { matchLabels: { app: 'g' } }, version: '1' } },
  children: [{ apiGroup: 'example.com', kind: 'GadgetPart', names: ['p0', 'p1'] }],
}

describe('metactl render (rolling update)', () => {
  after(() => {
    remove()
  })

  it('shows the one child the rollout step moves, and keeps the others at their revision', async () => {
    const result = await render(
      '--controller',
      controller,
      '--parent',
      file('parent.json', JSON.stringify(parent)),
      '--observed',
      file('observed.yaml', stream([part('p0', '1'), part('p1', '1'), oldRevision])),
      '--hook-module',
      hook
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    const text = result.out.join('\n')
    assert.match(
      text,
      /# {3}moves GadgetPart p0 from revision gadgets\.example\.com-old to the latest revision/
    )
    assert.match(
      text,
      /revision gadgets\.example\.com-[0-9a-f]{40} \(latest, new\): GadgetPart p0\n/
    )
    assert.match(text, /revision gadgets\.example\.com-old \(older\): GadgetPart p1/)
    assert.match(
      text,
      /revision writes: create gadgets\.example\.com-[0-9a-f]{40}; update gadgets\.example\.com-old; delete none/
    )
    // The plan recreates p0 only; p1 stays at version 1.
    assert.match(text, /recreate +GadgetPart\.example\.com\/v1 ns\/p0 \(RollingRecreate\)/)
    assert.match(text, /unchanged +GadgetPart\.example\.com\/v1 ns\/p1/)
    assert.match(text, /reason: RolloutProgressing/)
  })

  it('says why the rollout waits, in JSON too', async () => {
    const notReady = { ...part('p0', '2'), status: { conditions: [] } }
    const revision = {
      ...oldRevision,
      children: [{ apiGroup: 'example.com', kind: 'GadgetPart', names: ['p1'] }],
    }
    const result = await render(
      '--controller',
      controller,
      '--parent',
      file('parent2.json', JSON.stringify(parent)),
      '--observed',
      file('observed2.yaml', stream([notReady, part('p1', '1'), revision])),
      '--hook-module',
      hook,
      '--output',
      'json'
    )
    assert.equal(result.code, 0, result.err.join('\n'))
    const output = JSON.parse(result.out.join('\n')) as {
      rollout: { moved: unknown; waiting: { reason: string; message: string } }
    }
    assert.equal(output.rollout.moved, null)
    assert.deepEqual(output.rollout.waiting, {
      reason: 'status-check',
      message: 'child GadgetPart p0 failed status check: required condition type missing: "Ready"',
    })
  })
})
