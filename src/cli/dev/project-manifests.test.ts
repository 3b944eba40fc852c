import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { readProjectManifests } from './project-manifests.js'

const project = mkdtempSync(join(tmpdir(), 'metactl-project-manifests-'))
after(() => {
  rmSync(project, { recursive: true, force: true })
})

describe('readProjectManifests', () => {
  it('keeps every object of deploy/ with the file it came from, for the rights check', () => {
    const deploy = join(project, 'deploy')
    mkdirSync(deploy)
    writeFileSync(
      join(deploy, 'controller.yaml'),
      [
        'apiVersion: metacontroller.k8s.io/v1alpha1',
        'kind: CompositeController',
        'metadata: { name: web }',
        'spec: {}',
      ].join('\n')
    )
    writeFileSync(
      join(deploy, 'rbac.yaml'),
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata: { name: "metacontroller-ts:web" }',
        'rules: []',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: { name: engine }',
      ].join('\n')
    )
    const manifests = readProjectManifests(deploy, project)
    assert.deepEqual(
      manifests.objects.map((o) => [o.kind, manifests.origins.get(o)]),
      [
        ['CompositeController', 'deploy/controller.yaml'],
        ['ClusterRole', 'deploy/rbac.yaml'],
        ['ClusterRoleBinding', 'deploy/rbac.yaml'],
      ]
    )
    assert.deepEqual(
      manifests.controllers.map((c) => c.metadata.name),
      ['web']
    )
  })
})
