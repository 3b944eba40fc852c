import type { JsonObject, KubeObject } from '../core/kube-object.js'
import { hookCodec } from '../api/wire/codecs.js'
import { checkDesiredAttachments, checkDesiredChildren } from './check-desired-objects.js'
import { crdVersionSchema } from './crd-schema.js'
import { parentSchemaMismatch } from './parent-schema-check.js'
import type {
  CompositeHook,
  CompositeRequest,
  DecoratorHook,
  DecoratorRequest,
  ObjectLike,
} from './hook-types.js'

/** A composite hook's answer after the engine's validation. */
export interface CheckedCompositeResponse<
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> {
  readonly status: Status | null
  readonly children: readonly Child[]
  readonly resyncAfterSeconds: number
  readonly finalized: boolean
}

/** The parts of a request a test gives; the rest gets empty defaults. */
export interface CompositeFixture<Parent extends ObjectLike, Child extends ObjectLike> {
  readonly parent: Parent
  readonly children?: CompositeRequest<Parent, Child>['children']
  readonly related?: CompositeRequest['related']
  /**
   * The CompositeController manifest (e.g. `readManifestFile('deploy/controller.yaml')[0]`): the
   * hook receives it, and the answer is checked against its `childResources` and selector.
   */
  readonly controller?: KubeObject
  readonly finalizing?: boolean
  /** The parent's CRD (parsed YAML): the parent is checked against its schema first. */
  readonly parentCrd?: unknown
}

/**
 * The parent the children are checked against. A fixture without a namespace is taken as a
 * namespaced parent in `default` (fixtures often leave it out), unless its CRD says the kind is
 * cluster-scoped: only then must namespaced children name their namespace.
 */
function checkedParent(object: ObjectLike, crd: unknown): KubeObject {
  const parent = structuredClone(object) as unknown as KubeObject
  const scope = (crd as { spec?: { scope?: unknown } } | undefined)?.spec?.scope
  if (parent.metadata.namespace !== undefined || scope === 'Cluster') return parent
  return { ...parent, metadata: { ...parent.metadata, namespace: 'default' } }
}

/** Throws the `serveHooks` 422 message when the fixture does not match the CRD. */
function checkFixture(object: ObjectLike, crd: unknown): void {
  if (crd === undefined) return
  const mismatch = parentSchemaMismatch(object as JsonObject, crdVersionSchema(crd).schema)
  if (mismatch !== undefined) throw new TypeError(`fixture ${mismatch.message}`)
}

/**
 * Calls a composite hook with a fixture request, no HTTP, and checks its answer as the engine
 * would: strict decoding (unknown fields, wrong types and objects without kind or apiVersion
 * fail), then the engine's own checks on the children (`prepareDesiredChildren`: names,
 * namespaces, duplicates, labels, and, given `controller`, declared child types and the
 * selector). Given `parentCrd`, the parent is first checked against the CRD's schema.
 *
 * @example
 * ```ts
 * const out = await callCompositeHook(sync, { parent: samplePodService })
 * assert.equal(out.children.length, 2)
 * ```
 */
export async function callCompositeHook<
  Parent extends ObjectLike,
  Child extends ObjectLike,
  Status = Record<string, unknown>,
>(
  hook: CompositeHook<Parent, Child, Status>,
  fixture: CompositeFixture<Parent, Child>
): Promise<CheckedCompositeResponse<Child, Status>> {
  checkFixture(fixture.parent, fixture.parentCrd)
  const request: CompositeRequest<Parent, Child> = {
    controller: fixture.controller ?? {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'test' },
      spec: {},
      status: {},
    },
    parent: fixture.parent,
    children: fixture.children ?? {},
    related: fixture.related ?? {},
    finalizing: fixture.finalizing ?? false,
  }
  const response = await hook(structuredClone(request))
  const decoded = hookCodec('v2').decodeCompositeSync(JSON.stringify(response), {
    hook: request.finalizing ? 'finalize' : 'sync',
    mode: 'strict',
  }).response
  checkDesiredChildren(
    decoded.children,
    checkedParent(fixture.parent, fixture.parentCrd),
    fixture.controller
  )
  return {
    status: decoded.status as Status | null,
    children: decoded.children as unknown as readonly Child[],
    resyncAfterSeconds: decoded.resyncAfterMs / 1000,
    finalized: decoded.finalized,
  }
}

/** A decorator hook's answer after the engine's validation. */
export interface CheckedDecoratorResponse<
  Attachment extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> {
  /** Label updates for the target: a string sets the key, null removes it. */
  readonly labels: Readonly<Record<string, string | null>>
  /** Annotation updates for the target: a string sets the key, null removes it. */
  readonly annotations: Readonly<Record<string, string | null>>
  /** The target's new status; null leaves it unchanged. */
  readonly status: Status | null
  readonly attachments: readonly Attachment[]
  readonly resyncAfterSeconds: number
  readonly finalized: boolean
}

/** The parts of a decorator request a test gives; the rest gets empty defaults. */
export interface DecoratorFixture<Target extends ObjectLike, Attachment extends ObjectLike> {
  /** The decorated object (`object` in the request). */
  readonly object: Target
  readonly attachments?: DecoratorRequest<Target, Attachment>['attachments']
  readonly related?: DecoratorRequest['related']
  /**
   * The DecoratorController manifest: the hook receives it, and the attachments are checked
   * against its `attachments` rules.
   */
  readonly controller?: KubeObject
  readonly finalizing?: boolean
  /** The target's CRD (parsed YAML), when it is a custom resource: checked against first. */
  readonly objectCrd?: unknown
}

/**
 * Calls a DecoratorController sync or finalize hook with a fixture request, no HTTP, and
 * checks its answer as the engine would: strict decoding, as for a v2 webhook or an in-process
 * hook (unknown fields, label values that are not strings or null, and attachments without kind
 * or apiVersion fail), then the engine's checks on the attachments (names, the target's
 * namespace, duplicates and, given `controller`, declared attachment types).
 *
 * @example
 * ```ts
 * const out = await callDecoratorHook(sync, { object: samplePodService })
 * assert.equal(out.labels['example.com/decorated'], 'true')
 * assert.equal(out.attachments.length, 1)
 * ```
 */
export async function callDecoratorHook<
  Target extends ObjectLike,
  Attachment extends ObjectLike,
  Status = Record<string, unknown>,
>(
  hook: DecoratorHook<Target, Attachment, Status>,
  fixture: DecoratorFixture<Target, Attachment>
): Promise<CheckedDecoratorResponse<Attachment, Status>> {
  checkFixture(fixture.object, fixture.objectCrd)
  const request: DecoratorRequest<Target, Attachment> = {
    controller: fixture.controller ?? {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name: 'test' },
      spec: {},
      status: {},
    },
    object: fixture.object,
    attachments: fixture.attachments ?? {},
    related: fixture.related ?? {},
    finalizing: fixture.finalizing ?? false,
  }
  const response = await hook(structuredClone(request))
  const decoded = hookCodec('v2').decodeDecoratorSync(JSON.stringify(response), {
    hook: request.finalizing ? 'finalize' : 'sync',
    mode: 'strict',
  }).response
  checkDesiredAttachments(
    decoded.attachments,
    checkedParent(fixture.object, fixture.objectCrd),
    fixture.controller
  )
  return {
    labels: decoded.labels,
    annotations: decoded.annotations,
    status: decoded.status as Status | null,
    attachments: decoded.attachments as unknown as readonly Attachment[],
    resyncAfterSeconds: decoded.resyncAfterMs / 1000,
    finalized: decoded.finalized,
  }
}
