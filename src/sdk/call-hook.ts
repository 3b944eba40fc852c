import type { JsonObject, KubeObject } from '../core/kube-object.js'
import type { CompositeSyncResponse, DecoratorSyncResponse } from '../api/hook-model.js'
import { hookCodec } from '../api/wire/codecs.js'
import { checkDesiredAttachments, checkDesiredChildren } from './check-desired-objects.js'
import { parentSchemaMismatch, parentSchemaOf } from './parent-schema-check.js'
import { crdNames, kindScope } from './resource-scope.js'
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

/** What a test may give either helper besides the parent or target and its objects. */
export interface HookFixtureOptions {
  /** Related objects (by type, then `namespace/name`), as the customize hook's rules select. */
  readonly related?: CompositeRequest['related']
  /**
   * The controller manifest (e.g. `readManifestFile('deploy/controller.yaml')[0]`): the hook
   * receives it, and the answer is checked against its child or attachment rules (and a
   * CompositeController's selector).
   */
  readonly controller?: KubeObject
  readonly finalizing?: boolean
  /**
   * The parent or target kind's scope, for a custom kind given without its CRD: `Cluster` for a
   * cluster-scoped one (its namespaced children must then name their namespace). Built-in
   * kinds (`Namespace`) and kinds whose CRD is given need none.
   */
  readonly scope?: FixtureScope
}

/** The parts of a request a test gives; the rest gets empty defaults. */
export interface CompositeFixture<
  Parent extends ObjectLike,
  Child extends ObjectLike,
> extends HookFixtureOptions {
  readonly parent: Parent
  readonly children?: CompositeRequest<Parent, Child>['children']
  /** The parent's CRD (parsed YAML): the parent is checked against its schema first. */
  readonly parentCrd?: unknown
}

/** A kind's scope, as a CRD's `spec.scope` says it. */
export type FixtureScope = 'Namespaced' | 'Cluster'

/**
 * The parent the children are checked against, scoped by the engine's rules (`kindScope`: its
 * CRD, else the built-in kinds' table, so a Namespace is cluster-scoped), or by the fixture's
 * `scope`. A fixture without a namespace whose kind is namespaced or unknown is taken as in
 * `default` (fixtures often leave it out): only a cluster-scoped parent's namespaced children
 * must name their namespace.
 */
function checkedParent(
  object: ObjectLike,
  crd: unknown,
  scope: FixtureScope | undefined
): KubeObject {
  const parent = structuredClone(object) as unknown as KubeObject
  if (parent.metadata.namespace !== undefined) return parent
  const namespaced =
    scope === undefined
      ? kindScope(parent.apiVersion, parent.kind, crd === undefined ? [] : [crd]).namespaced
      : scope === 'Namespaced'
  if (namespaced === false) return parent
  return { ...parent, metadata: { ...parent.metadata, namespace: 'default' } }
}

/** Throws the `serveHooks` 422 message when the fixture does not match its kind's CRD. */
function checkFixture(object: ObjectLike, crd: unknown): void {
  if (crd === undefined) return
  const schema = parentSchemaOf(object as JsonObject, [crd])
  if (schema === undefined) {
    const names = crdNames(crd)
    throw new TypeError(
      `fixture ${object.kind ?? ''}: the CRD given serves ${names?.kind ?? 'no kind'}` +
        `${names === undefined ? '' : `.${names.group}`}, not ${object.apiVersion ?? ''} ${object.kind ?? ''}`
    )
  }
  const mismatch = parentSchemaMismatch(object as JsonObject, schema)
  if (mismatch !== undefined) throw new TypeError(`fixture ${mismatch.message}`)
}

/** What one controller kind's helper does differently: its subject, request, decoding, checks. */
interface HelperKind<Fixture extends CommonFixture, Decoded> {
  readonly controllerKind: 'CompositeController' | 'DecoratorController'
  /** The object the hook is about (parent or target) and its CRD, when given. */
  subject(fixture: Fixture): { readonly object: ObjectLike; readonly crd: unknown }
  /** The kind's own request fields, around `controller`, `related` and `finalizing`. */
  request(common: CommonRequest, fixture: Fixture): unknown
  decode(text: string, hook: 'sync' | 'finalize'): Decoded
  check(decoded: Decoded, subject: KubeObject, controller: KubeObject | undefined): void
}

/** The request fields both kinds share. */
interface CommonRequest {
  readonly controller: KubeObject
  readonly related: Readonly<Record<string, unknown>>
  readonly finalizing: boolean
}

/** The fixture fields both kinds share. */
interface CommonFixture {
  readonly related?: Readonly<Record<string, unknown>>
  readonly controller?: KubeObject
  readonly finalizing?: boolean
  readonly scope?: FixtureScope
}

/**
 * The one path of both helpers: the subject checked against its CRD, the hook called with a
 * copy of the request, its answer decoded strictly and checked as the engine would.
 */
async function callChecked<Fixture extends CommonFixture, Decoded>(
  kind: HelperKind<Fixture, Decoded>,
  hook: (request: never) => unknown,
  fixture: Fixture
): Promise<Decoded> {
  const { object, crd } = kind.subject(fixture)
  checkFixture(object, crd)
  const common: CommonRequest = {
    controller: fixture.controller ?? {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: kind.controllerKind,
      metadata: { name: 'test' },
      spec: {},
      status: {},
    },
    related: fixture.related ?? {},
    finalizing: fixture.finalizing ?? false,
  }
  const response = await (hook as (request: unknown) => unknown)(
    structuredClone(kind.request(common, fixture))
  )
  const decoded = kind.decode(JSON.stringify(response), common.finalizing ? 'finalize' : 'sync')
  kind.check(decoded, checkedParent(object, crd, fixture.scope), fixture.controller)
  return decoded
}

const codec = hookCodec('v2')

const COMPOSITE: HelperKind<CompositeFixture<ObjectLike, ObjectLike>, CompositeSyncResponse> = {
  controllerKind: 'CompositeController',
  subject: (fixture) => ({ object: fixture.parent, crd: fixture.parentCrd }),
  request: (common, fixture) => ({
    ...common,
    parent: fixture.parent,
    children: fixture.children ?? {},
  }),
  decode: (text, hook) => codec.decodeCompositeSync(text, { hook, mode: 'strict' }).response,
  check: (answer, parent, controller) => {
    checkDesiredChildren(answer.children, parent, controller)
  },
}

const DECORATOR: HelperKind<DecoratorFixture<ObjectLike, ObjectLike>, DecoratorSyncResponse> = {
  controllerKind: 'DecoratorController',
  subject: (fixture) => ({ object: fixture.object, crd: fixture.objectCrd }),
  request: (common, fixture) => ({
    ...common,
    object: fixture.object,
    attachments: fixture.attachments ?? {},
  }),
  decode: (text, hook) => codec.decodeDecoratorSync(text, { hook, mode: 'strict' }).response,
  check: (answer, target, controller) => {
    checkDesiredAttachments(answer.attachments, target, controller)
  },
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
  const decoded = await callChecked(COMPOSITE, hook, fixture)
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
export interface DecoratorFixture<
  Target extends ObjectLike,
  Attachment extends ObjectLike,
> extends HookFixtureOptions {
  /** The decorated object (`object` in the request). */
  readonly object: Target
  readonly attachments?: DecoratorRequest<Target, Attachment>['attachments']
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
  const decoded = await callChecked(DECORATOR, hook, fixture)
  return {
    labels: decoded.labels,
    annotations: decoded.annotations,
    status: decoded.status as Status | null,
    attachments: decoded.attachments as unknown as readonly Attachment[],
    resyncAfterSeconds: decoded.resyncAfterMs / 1000,
    finalized: decoded.finalized,
  }
}
