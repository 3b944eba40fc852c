import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { correctGuesses, offlineResource, parentResourceOf, typeOf } from './offline-resource.js'
import type { ResolvedRule } from './offline-resource.js'

function guessed(): ResolvedRule {
  return {
    rule: { apiVersion: 'example.com/v1', resource: 'widgets' } as ResolvedRule['rule'],
    field: 'childResources',
    index: 0,
    kind: 'Widget',
    source: 'guessed',
  }
}

describe('offlineResource', () => {
  it('splits the group from the version and knows well-known cluster-scoped kinds', () => {
    const ns = offlineResource('rbac.authorization.k8s.io/v1', 'clusterroles', 'ClusterRole')
    assert.deepEqual(ns.ref, {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'clusterroles',
      namespaced: false,
    })
    assert.equal(offlineResource('v1', 'pods', 'Pod').ref.namespaced, true)
  })
})

describe('parentResourceOf', () => {
  it("takes the scope from the parent's CRD, else from whether the sample has a namespace", () => {
    const parent: KubeObject = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 'a' },
    }
    assert.equal(parentResourceOf('things', parent, []).ref.namespaced, false)
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'things', kind: 'Thing' },
      },
    }
    assert.equal(parentResourceOf('things', parent, [crd]).ref.namespaced, true)
  })
})

describe('correctGuesses', () => {
  it("takes a guessed rule's kind from an answered object of its resource, with a warning", () => {
    const rule = { ...guessed(), kind: 'Guess' }
    const warnings: string[] = []
    const other = { apiVersion: 'example.com/v2', kind: 'Widget', metadata: { name: 'w' } }
    correctGuesses([rule], [other], (line) => warnings.push(line))
    assert.equal(rule.kind, 'Guess')
    const child = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }
    correctGuesses([rule], [child], (line) => warnings.push(line))
    assert.equal(typeOf(rule), 'Widget.example.com/v1')
    assert.equal(rule.source, 'desired')
    assert.equal(warnings.length, 1)
  })

  it('leaves rules whose kind is known alone', () => {
    const rule: ResolvedRule = { ...guessed(), kind: 'Guess', source: 'crd' }
    const child = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }
    correctGuesses([rule], [child], () => undefined)
    assert.equal(rule.kind, 'Guess')
  })
})
