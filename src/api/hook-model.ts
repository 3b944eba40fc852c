/**
 * The one internal, version-independent model of Metacontroller hook requests and responses.
 *
 * @remarks
 * The engine and in-process TypeScript hooks only ever see these types. The v1 and v2 wire
 * formats (`wire/v1.ts`, `wire/v2.ts`) translate at the HTTP edge: they differ only in how object
 * maps are keyed and filtered (upstream `RelativeObjectMap` vs `UniformObjectMap`) and in the
 * default strictness of response decoding.
 *
 * Internally, object maps always use uniform keys: `namespace/name` for namespaced objects and
 * `name` for cluster-scoped ones (the v2 form).
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../core/kube-object.js'

/** A hook protocol version (`hooks.<hook>.version`); absent or empty means `v1`. */
export type HookVersion = 'v1' | 'v2'

/** How strictly a hook response is decoded (`webhook.responseUnMarshallMode`). */
export type ResponseDecodeMode = 'loose' | 'strict'

/** The hooks a controller may call. */
export type HookName = 'sync' | 'finalize' | 'customize'

/**
 * Objects grouped by type, then by object key.
 *
 * The outer key is the GVK key `Kind.apiVersion` (`Pod.v1`, `StatefulSet.apps/v1`); the inner
 * key is `namespace/name`, or `name` for a cluster-scoped object.
 */
export type ObjectsByType = ReadonlyMap<string, ReadonlyMap<string, KubeObject>>

/** Returns the GVK key of an apiVersion and kind: `Kind.apiVersion`, e.g. `Pod.v1`. */
export function gvkKey(apiVersion: string, kind: string): string {
  return `${kind}.${apiVersion}`
}

/**
 * Calls one hook: a webhook, or a TypeScript function run in-process. The engine only ever calls
 * hooks through this type, so both kinds of hook go through one pipeline.
 */
export type HookFunction<Request, Response> = (
  request: Request,
  signal: AbortSignal
) => Promise<Response>

/** A CompositeController sync or finalize request. */
export interface CompositeSyncRequest {
  /** The CompositeController object as read from the cache (with `status: {}`). */
  readonly controller: KubeObject
  readonly parent: KubeObject
  /** One entry for every declared child rule, even when empty. */
  readonly children: ObjectsByType
  /** One entry per related rule from customize; empty when customize is off. */
  readonly related: ObjectsByType
  /** True when the finalize hook is the one being called. */
  readonly finalizing: boolean
}

/**
 * An Event a hook asks the engine to record on the parent (or target): our extension, sent as
 * `events: [{type, reason, message}]` in a sync or finalize response.
 */
export interface HookEvent {
  readonly type: 'Normal' | 'Warning'
  readonly reason: string
  readonly message: string
}

/** A CompositeController sync or finalize response. */
export interface CompositeSyncResponse {
  /** Replaces the parent's status (the engine adds `observedGeneration`); null wipes it. */
  readonly status: JsonObject | null
  /** Desired children; empty (or absent on the wire) means every observed child is deleted. */
  readonly children: readonly KubeObject[]
  /** One-shot delayed resync in ms; 0 means none. */
  readonly resyncAfterMs: number
  /** True removes the controller's finalizer from the parent. */
  readonly finalized: boolean
  /** Events to record on the parent once the sync succeeded (extension; absent means none). */
  readonly events?: readonly HookEvent[]
}

/** A DecoratorController sync or finalize request. */
export interface DecoratorSyncRequest {
  readonly controller: KubeObject
  /** The target object (sent as `object`, not `parent`). */
  readonly object: KubeObject
  readonly attachments: ObjectsByType
  readonly related: ObjectsByType
  readonly finalizing: boolean
}

/** A DecoratorController sync or finalize response. */
export interface DecoratorSyncResponse {
  /** Partial label update: a string sets the key, null deletes it. */
  readonly labels: Readonly<Record<string, string | null>>
  /** Partial annotation update: a string sets the key, null deletes it. */
  readonly annotations: Readonly<Record<string, string | null>>
  /** Replaces the target's status; null leaves it unchanged. */
  readonly status: JsonObject | null
  readonly attachments: readonly KubeObject[]
  readonly resyncAfterMs: number
  readonly finalized: boolean
  /** Events to record on the target once the sync succeeded (extension; absent means none). */
  readonly events?: readonly HookEvent[]
}

/** Label selector as in Kubernetes `metav1.LabelSelector`. */
export interface LabelSelectorSpec {
  readonly matchLabels?: Readonly<Record<string, string>>
  readonly matchExpressions?: readonly {
    readonly key: string
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'
    readonly values?: readonly string[]
  }[]
}

/** One rule of a customize response: which related objects to send to sync. */
export interface RelatedResourceRule {
  readonly apiVersion: string
  readonly resource: string
  readonly labelSelector?: LabelSelectorSpec | null
  readonly namespaceSelector?: LabelSelectorSpec | null
  readonly namespace?: string
  readonly names?: readonly string[]
}

/** A customize request. */
export interface CustomizeRequest {
  readonly controller: KubeObject
  readonly parent: KubeObject
}

/** A customize response. */
export interface CustomizeResponse {
  readonly relatedResources: readonly RelatedResourceRule[]
}
