// Golden files for the v1 and v2 wire formats: request bodies built from a fixed internal model
// must equal the stored JSON, and stored response bodies must decode (or fail) as recorded.
import { objectKey } from '../../core/object-key.js'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { LabelSelector } from '../../core/label-selector.js'
import type {
  CompositeSyncRequest,
  CustomizeRequest,
  DecoratorSyncRequest,
  HookVersion,
  LabelSelectorSpec,
  ObjectsByType,
} from '../hook-model.js'
import { gvkKey } from '../hook-model.js'
import { HookResponseError } from '../hook-response-error.js'
import type { HookResponseProblem } from '../hook-response-error.js'
import { hookCodec } from './codecs.js'
import type { HookCodec } from './hook-codec.js'

const FIXTURES = new URL('../../../test/fixtures/hooks/', import.meta.url)

function fixtureText(version: HookVersion, name: string): string {
  return readFileSync(new URL(`${version}/${name}`, FIXTURES), 'utf8')
}

function fixtureJson(version: HookVersion, name: string): unknown {
  const value: unknown = JSON.parse(fixtureText(version, name))
  return value
}

/** The JSON a request body carries, exactly as `JSON.stringify` sends it. */
function asJson(value: unknown): unknown {
  const json: unknown = JSON.parse(JSON.stringify(value))
  return json
}

/** Groups objects by GVK key and uniform key; `types` lists declared types (kept when empty). */
function objectsByType(types: readonly string[], objects: readonly KubeObject[]): ObjectsByType {
  const map = new Map<string, Map<string, KubeObject>>(types.map((type) => [type, new Map()]))
  for (const object of objects) {
    const type = gvkKey(object.apiVersion, object.kind)
    const group = map.get(type) ?? new Map<string, KubeObject>()
    group.set(objectKey(object), object)
    map.set(type, group)
  }
  return map
}

// ---- the fixed internal model ----

function compositeController(version: HookVersion): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: {
      name: 'widget-controller',
      uid: '0b6c3f5e-0000-4000-8000-000000000001',
      resourceVersion: '1001',
      generation: 1,
      creationTimestamp: '2026-01-02T03:04:05Z',
    },
    spec: {
      parentResource: { apiVersion: 'test.metacontroller/v1', resource: 'widgets' },
      childResources: [
        { apiVersion: 'v1', resource: 'pods' },
        { apiVersion: 'v1', resource: 'persistentvolumeclaims' },
      ],
      hooks: {
        sync: { version, webhook: { url: 'http://widget-hooks.metacontroller/sync' } },
        customize: { version, webhook: { url: 'http://widget-hooks.metacontroller/customize' } },
      },
    },
  }
}

function decoratorController(version: HookVersion): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'DecoratorController',
    metadata: { name: 'widget-decorator', uid: '0b6c3f5e-0000-4000-8000-000000000002' },
    spec: {
      resources: [{ apiVersion: 'test.metacontroller/v1', resource: 'widgets' }],
      attachments: [{ apiVersion: 'v1', resource: 'services' }],
      hooks: { sync: { version, webhook: { url: 'http://widget-hooks.metacontroller/decorate' } } },
    },
    status: { stale: 'upstream never sends a controller status' },
  }
}

const widget: KubeObject = {
  apiVersion: 'test.metacontroller/v1',
  kind: 'Widget',
  metadata: {
    name: 'w1',
    namespace: 'team-a',
    uid: '5f1d7a2c-0000-4000-8000-0000000000a1',
    resourceVersion: '2001',
    generation: 3,
    labels: { app: 'w1' },
  },
  spec: { replicas: 1, selector: { matchLabels: { app: 'w1' } } },
  status: { observedGeneration: 2, ready: false },
}

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'w1-pod',
    namespace: 'team-a',
    uid: '5f1d7a2c-0000-4000-8000-0000000000b1',
    labels: { app: 'w1' },
    ownerReferences: [
      {
        apiVersion: 'test.metacontroller/v1',
        kind: 'Widget',
        name: 'w1',
        uid: '5f1d7a2c-0000-4000-8000-0000000000a1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] },
}

const settings: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'team-a', uid: '5f1d7a2c-0000-4000-8000-0000000000c1' },
  data: { mode: 'fast' },
}

const globalSettings: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'global-settings',
    namespace: 'shared',
    uid: '5f1d7a2c-0000-4000-8000-0000000000c2',
  },
  data: { region: 'eu' },
}

const teamANamespace: KubeObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', uid: '5f1d7a2c-0000-4000-8000-0000000000d1', labels: { team: 'a' } },
}

const clusterWidget: KubeObject = {
  apiVersion: 'test.metacontroller/v1',
  kind: 'ClusterWidget',
  metadata: {
    name: 'cw1',
    uid: '5f1d7a2c-0000-4000-8000-0000000000e1',
    generation: 1,
    deletionTimestamp: '2026-01-02T04:00:00Z',
    finalizers: ['metacontroller.io/compositecontroller-widget-controller'],
  },
  spec: { namespaces: ['ns-a', 'ns-b'] },
}

function copyIn(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cw1', namespace, labels: { 'controller-uid': 'e1' } },
    data: { copied: 'true' },
  }
}

function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }
}

const sourceSecret: KubeObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'source', namespace: 'default' },
  type: 'Opaque',
  data: { token: 'c2VjcmV0' },
}

const service: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'w1-svc', namespace: 'team-a' },
  spec: { ports: [{ port: 80 }] },
}

const strayService: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'w1-svc', namespace: 'team-b' },
  spec: { ports: [{ port: 80 }] },
}

/** A namespaced parent with a Pod child, an empty child type, and related objects in its own
 *  namespace, in another namespace, and cluster-scoped. */
function namespacedSync(version: HookVersion): CompositeSyncRequest {
  return {
    controller: compositeController(version),
    parent: widget,
    children: objectsByType(['Pod.v1', 'PersistentVolumeClaim.v1'], [pod]),
    related: objectsByType(
      ['ConfigMap.v1', 'Namespace.v1'],
      [settings, globalSettings, teamANamespace]
    ),
    finalizing: false,
  }
}

/** A cluster-scoped parent being finalized, with children and related objects in namespaces. */
function clusterFinalize(version: HookVersion): CompositeSyncRequest {
  return {
    controller: compositeController(version),
    parent: clusterWidget,
    children: objectsByType(['ConfigMap.v1'], [copyIn('ns-b'), copyIn('ns-a')]),
    related: objectsByType(
      ['Namespace.v1', 'Secret.v1'],
      [namespace('ns-a'), namespace('ns-b'), sourceSecret]
    ),
    finalizing: true,
  }
}

/** A namespaced target with one attachment in its namespace, one elsewhere, and no customize. */
function decoratorSync(version: HookVersion): DecoratorSyncRequest {
  return {
    controller: decoratorController(version),
    object: widget,
    attachments: objectsByType(['Service.v1'], [service, strayService]),
    related: new Map(),
    finalizing: false,
  }
}

function customize(version: HookVersion): CustomizeRequest {
  return { controller: compositeController(version), parent: widget }
}

// ---- expectations for the stored responses ----

type Outcome = 'ok' | HookResponseProblem

interface ResponseCase {
  readonly file: string
  readonly decode: (codec: HookCodec, body: string) => unknown
  /** The outcome with each version's default mode. */
  readonly v1: Outcome
  readonly v2: Outcome
  /** A fragment of the error message, when an error is expected. */
  readonly message?: RegExp
}

const composite = (codec: HookCodec, body: string): unknown => codec.decodeCompositeSync(body)
const decorator = (codec: HookCodec, body: string): unknown => codec.decodeDecoratorSync(body)
const customizer = (codec: HookCodec, body: string): unknown => codec.decodeCustomize(body)

const RESPONSE_CASES: readonly ResponseCase[] = [
  { file: 'composite-sync-response.json', decode: composite, v1: 'ok', v2: 'ok' },
  { file: 'composite-sync-response-null-children.json', decode: composite, v1: 'ok', v2: 'ok' },
  { file: 'composite-sync-response-missing-children.json', decode: composite, v1: 'ok', v2: 'ok' },
  {
    file: 'composite-sync-response-unknown-field.json',
    decode: composite,
    v1: 'ok',
    v2: 'strict',
    message:
      /^strict validation failed for v2 webhookResponse \(type: sync, mode: strict\): unknown field "foo";/,
  },
  {
    file: 'composite-sync-response-duplicate-key.json',
    decode: composite,
    v1: 'ok',
    v2: 'strict',
    message: /\(type: sync, mode: strict\): duplicate field "finalized";/,
  },
  {
    file: 'composite-sync-response-case-sensitive.json',
    decode: composite,
    v1: 'ok',
    v2: 'strict',
    message: /unknown field "Children"/,
  },
  {
    file: 'composite-sync-response-status-not-object.json',
    decode: composite,
    v1: 'type',
    v2: 'type',
    message:
      /^can't unmarshal webhookResponse \(version: v\d, type: sync\): "status" must be an object or null, got the string "ready"$/,
  },
  {
    file: 'composite-sync-response-children-not-array.json',
    decode: composite,
    v1: 'type',
    v2: 'type',
    message: /"children" must be an array or null, got an object/,
  },
  {
    file: 'composite-sync-response-child-without-kind.json',
    decode: composite,
    v1: 'type',
    v2: 'type',
    message: /"children\[1\]\.kind" must be a non-empty string such as "ConfigMap", got nothing/,
  },
  {
    file: 'composite-sync-response-resync-not-number.json',
    decode: composite,
    v1: 'type',
    v2: 'type',
    message: /"resyncAfterSeconds" must be a number, got the string "5"/,
  },
  {
    file: 'composite-sync-response-finalized-not-boolean.json',
    decode: composite,
    v1: 'type',
    v2: 'type',
    message: /"finalized" must be true, false or null, got the string "true"/,
  },
  { file: 'decorator-sync-response.json', decode: decorator, v1: 'ok', v2: 'ok' },
  {
    file: 'decorator-sync-response-label-not-string.json',
    decode: decorator,
    v1: 'type',
    v2: 'type',
    message:
      /"labels\.replicas" must be a string \(to set the key\) or null \(to remove it\), got the number 3/,
  },
  { file: 'customize-response.json', decode: customizer, v1: 'ok', v2: 'ok' },
  {
    file: 'customize-response-duplicate-key.json',
    decode: customizer,
    v1: 'ok',
    v2: 'strict',
    message:
      /\(type: customize, mode: strict\): duplicate field "relatedResources\[0\]\.namespace"/,
  },
  {
    file: 'customize-response-names-with-selector.json',
    decode: customizer,
    v1: 'invalid',
    v2: 'invalid',
    message:
      /^invalid v\d webhookResponse \(type: customize\): "relatedResources\[0\]": "names" cannot be combined with "labelSelector"/,
  },
]

describe('golden request bodies', () => {
  for (const version of ['v1', 'v2'] as const) {
    const codec = hookCodec(version)
    describe(version, () => {
      it('encodes a namespaced parent (composite-sync-request.json)', () => {
        assert.deepEqual(
          asJson(codec.encodeCompositeSync(namespacedSync(version))),
          fixtureJson(version, 'composite-sync-request.json')
        )
      })

      it('encodes a cluster-scoped parent (composite-sync-request-cluster-parent.json)', () => {
        assert.deepEqual(
          asJson(codec.encodeCompositeSync(clusterFinalize(version))),
          fixtureJson(version, 'composite-sync-request-cluster-parent.json')
        )
      })

      it('encodes a decorator target (decorator-sync-request.json)', () => {
        assert.deepEqual(
          asJson(codec.encodeDecoratorSync(decoratorSync(version))),
          fixtureJson(version, 'decorator-sync-request.json')
        )
      })

      it('encodes a customize request (customize-request.json)', () => {
        assert.deepEqual(
          asJson(codec.encodeCustomize(customize(version))),
          fixtureJson(version, 'customize-request.json')
        )
      })
    })
  }

  it('differs between v1 and v2 only in the object maps', () => {
    const v1 = asJson(hookCodec('v1').encodeCompositeSync(namespacedSync('v2')))
    const v2 = asJson(hookCodec('v2').encodeCompositeSync(namespacedSync('v2')))
    assert.ok(v1 !== null && typeof v1 === 'object' && v2 !== null && typeof v2 === 'object')
    const strip = (value: object): unknown =>
      Object.fromEntries(
        Object.entries(value).filter(([key]) => key !== 'children' && key !== 'related')
      )
    assert.deepEqual(strip(v1), strip(v2))
    assert.notDeepEqual(v1, v2)
  })

  it('writes object maps in sorted order', () => {
    const encoded = hookCodec('v2').encodeCompositeSync(clusterFinalize('v2'))
    assert.deepEqual(Object.keys(encoded.related), ['Namespace.v1', 'Secret.v1'])
    assert.deepEqual(Object.keys(encoded.children['ConfigMap.v1'] ?? {}), ['ns-a/cw1', 'ns-b/cw1'])
  })
})

describe('golden response bodies', () => {
  for (const version of ['v1', 'v2'] as const) {
    const codec = hookCodec(version)
    describe(version, () => {
      for (const testCase of RESPONSE_CASES) {
        const expected = testCase[version]
        it(`${testCase.file}: ${expected === 'ok' ? 'decodes' : `fails (${expected})`}`, () => {
          const body = fixtureText(version, testCase.file)
          if (expected === 'ok') {
            testCase.decode(codec, body)
            return
          }
          assert.throws(
            () => testCase.decode(codec, body),
            (error: unknown) => {
              assert.ok(error instanceof HookResponseError, String(error))
              assert.equal(error.problem, expected)
              assert.equal(error.version, version)
              if (testCase.message) assert.match(error.message, testCase.message)
              return true
            }
          )
        })
      }
    })
  }

  it('decodes the typical composite response', () => {
    for (const version of ['v1', 'v2'] as const) {
      const { response, warnings } = hookCodec(version).decodeCompositeSync(
        fixtureText(version, 'composite-sync-response.json')
      )
      assert.deepEqual(warnings, [])
      assert.deepEqual(response.status, {
        replicas: 1,
        conditions: [{ type: 'Ready', status: 'True' }],
      })
      assert.deepEqual(
        response.children.map((child) => `${child.kind}/${child.metadata.name ?? ''}`),
        ['Pod/w1-pod', 'ConfigMap/w1-config']
      )
      assert.equal(response.resyncAfterMs, 500)
      assert.equal(response.finalized, false)
    }
  })

  it('skips null children with a warning', () => {
    for (const version of ['v1', 'v2'] as const) {
      const { response, warnings } = hookCodec(version).decodeCompositeSync(
        fixtureText(version, 'composite-sync-response-null-children.json')
      )
      assert.deepEqual(response.children, [])
      assert.deepEqual(warnings, ['skipped the null entry "children[0]"'])
    }
  })

  it('treats missing children as an empty list and a missing status as null', () => {
    const { response } = hookCodec('v2').decodeCompositeSync(
      fixtureText('v2', 'composite-sync-response-missing-children.json')
    )
    assert.deepEqual(response, { status: null, children: [], resyncAfterMs: 0, finalized: true })
  })

  it('keeps the last duplicate and warns in loose mode', () => {
    const { response, warnings } = hookCodec('v1').decodeCompositeSync(
      fixtureText('v1', 'composite-sync-response-duplicate-key.json')
    )
    assert.equal(response.finalized, true)
    assert.deepEqual(warnings, ['duplicate field "finalized"'])
  })

  it('ignores a miscased field in loose mode, so children are empty', () => {
    const { response, warnings } = hookCodec('v1').decodeCompositeSync(
      fixtureText('v1', 'composite-sync-response-case-sensitive.json')
    )
    assert.deepEqual(response.children, [])
    assert.deepEqual(warnings, ['unknown field "Children"'])
  })

  it('honours an explicit responseUnMarshallMode over the version default', () => {
    const unknownField = fixtureText('v1', 'composite-sync-response-unknown-field.json')
    assert.throws(
      () => hookCodec('v1').decodeCompositeSync(unknownField, { mode: 'strict', hook: 'finalize' }),
      {
        name: 'HookResponseError',
        message:
          /^strict validation failed for v1 webhookResponse \(type: finalize, mode: strict\): unknown field "foo"/,
      }
    )
    const { warnings } = hookCodec('v2').decodeCompositeSync(unknownField, { mode: 'loose' })
    assert.deepEqual(warnings, ['unknown field "foo"'])
  })

  it('decodes the typical decorator response', () => {
    const { response } = hookCodec('v2').decodeDecoratorSync(
      fixtureText('v2', 'decorator-sync-response.json')
    )
    assert.deepEqual(response.labels, { decorated: 'true', 'drop-me': null })
    assert.deepEqual(response.annotations, { 'example.com/note': 'hello' })
    assert.equal(response.status, null)
    assert.deepEqual(
      response.attachments.map((a) => a.metadata.name),
      ['w1-svc']
    )
    assert.equal(response.resyncAfterMs, 0)
  })

  it('decodes the typical customize response into rules', () => {
    const { response } = hookCodec('v2').decodeCustomize(
      fixtureText('v2', 'customize-response.json')
    )
    assert.deepEqual(response.relatedResources, [
      { apiVersion: 'v1', resource: 'configmaps', namespace: 'shared', names: ['global-settings'] },
      {
        apiVersion: 'v1',
        resource: 'namespaces',
        labelSelector: { matchLabels: { team: 'a' } },
      },
      {
        apiVersion: 'v1',
        resource: 'secrets',
        labelSelector: {
          matchExpressions: [{ key: 'kind', operator: 'In', values: ['token'] }],
        },
        namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] },
      },
    ])
  })

  it('keeps hook-model LabelSelectorSpec and core LabelSelector the same type', () => {
    type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
    const same: Same<LabelSelectorSpec, LabelSelector> = true
    assert.equal(same, true)
  })
})
