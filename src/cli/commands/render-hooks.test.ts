import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { renderWorkspace } from '../../../test/support/render-workspace.js'

const { file, render, remove } = renderWorkspace('metactl-render-hooks-')

const controller = file(
  'cc.yaml',
  `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: { name: tenants }
spec:
  parentResource: { apiVersion: example.com/v1, resource: tenants }
  childResources:
    - { apiVersion: v1, resource: namespaces }
    - { apiVersion: v1, resource: resourcequotas }
  generateSelector: true
  hooks:
    sync: { webhook: { url: http://hooks.example/sync } }
    finalize: { webhook: { url: http://hooks.example/finalize } }
    customize: { webhook: { url: http://hooks.example/customize } }
`
)

// A cluster-scoped parent (no namespace, no CRD): scoped as its sample is.
const parent = file(
  'tenant.yaml',
  'apiVersion: example.com/v1\nkind: Tenant\nmetadata: { name: acme, uid: t1 }\nspec: { team: a }\n'
)

// The hooks of the controller as `metactl dev` maps them: the export named after metadata.name.
const hooks = file(
  'hooks.mjs',
  `const owned = (related) => Object.keys(related['ConfigMap.v1'] ?? {}).sort()
export const tenants = {
  sync: ({ parent, related }) => ({
    status: { related: owned(related) },
    children: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: parent.metadata.name } },
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota', namespace: parent.metadata.name }, spec: { hard: { pods: '10' } } },
    ],
  }),
  finalize: ({ related }) => ({ finalized: owned(related).length === 0 }),
  customize: ({ parent }) => ({
    relatedResources: [{ apiVersion: 'v1', resource: 'configmaps', labelSelector: { matchLabels: { tenant: parent.metadata.name } } }],
  }),
}
export function sync() {
  throw new Error('the top-level sync is not the hooks of tenants')
}
`
)

const related = file(
  'related.yaml',
  `apiVersion: v1
kind: ConfigMap
metadata: { name: keep, namespace: acme, labels: { tenant: acme } }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: other, namespace: beta, labels: { tenant: beta } }
`
)

after(() => {
  remove()
})

/** The controller and parent every test renders, with the hook module under test. */
function inputs(hookModule: string): string[] {
  return ['--controller', controller, '--parent', parent, '--hook-module', hookModule]
}

describe('metactl render finds hooks as metactl dev does, and calls customize offline', () => {
  it("uses the export named after the controller's metadata.name, or the one #name picks", async () => {
    for (const module of [hooks, `${hooks}#tenants`]) {
      const result = await render(...inputs(module), '--related', related, '--output', 'json')
      assert.equal(result.code, 0, result.err.join('\n'))
      const json = JSON.parse(result.out.join('\n')) as {
        status: unknown
        plan: { create: { key: string }[] }
      }
      assert.deepEqual(json.status, { related: ['acme/keep'] })
      assert.deepEqual(
        json.plan.create.map((e) => e.key),
        ['acme', 'acme/quota']
      )
    }
  })

  it('previews a finalize that depends on related objects', async () => {
    // The two runs differ only in --related: with the related object the finalize hook waits.
    const blocked = await render(...inputs(hooks), '--related', related, '--finalizing')
    assert.equal(blocked.code, 0, blocked.err.join('\n'))
    assert.match(blocked.out.join('\n'), /# finalized: false/)
    const done = await render(...inputs(hooks), '--finalizing')
    assert.equal(done.code, 0, done.err.join('\n'))
    assert.match(done.out.join('\n'), /# finalized: true/)
  })

  it('says when --related has no customize hook to select from it', async () => {
    const bare = file('bare.mjs', 'export const sync = () => ({})\n')
    const result = await render(...inputs(bare), '--related', related)
    assert.equal(result.code, 0, result.err.join('\n'))
    assert.match(result.err.join('\n'), /--related is not used: there is no customize hook/)
  })
})
