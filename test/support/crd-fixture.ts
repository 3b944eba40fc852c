// The CustomResourceDefinition the SDK and render tests check their custom parents against: one
// served and stored version v1 in the example.com group, so a test states only what it is about
// (the kind, its scope and the schema) and not the boilerplate every CRD repeats.
import type { KubeObject } from '../../src/core/kube-object.js'

/** What a test's CRD is about; see {@link crdFixture}. */
export interface CrdFixtureOptions {
  readonly kind: string
  readonly plural: string
  /** Left out of `spec.names` when not given, as `kubectl` allows. */
  readonly singular?: string
  readonly scope: 'Cluster' | 'Namespaced'
  /** The `openAPIV3Schema` of version v1. */
  readonly schema: Record<string, unknown>
}

/** A CRD named `<plural>.example.com` whose only version, v1, has the given schema. */
export function crdFixture(options: CrdFixtureOptions): KubeObject {
  const { kind, plural, singular, scope, schema } = options
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope,
      names: { plural, ...(singular === undefined ? {} : { singular }), kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  }
}
