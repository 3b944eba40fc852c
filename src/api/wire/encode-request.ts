/**
 * Hook request bodies as plain JSON values, with upstream's field names and order.
 *
 * @remarks
 * The field names are the same for v1 and v2; only the object maps differ, so each function takes
 * the version's {@link ObjectMapEncoder}. The results share the internal objects (nothing is
 * copied but the controller), so they must be serialised, not mutated.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { CompositeSyncRequest, CustomizeRequest, DecoratorSyncRequest } from '../hook-model.js'
import type { ObjectMapEncoder, WireObjectMap } from './object-map.js'

/** A CompositeController sync or finalize request on the wire. */
export interface WireCompositeSyncRequest {
  readonly controller: KubeObject
  readonly parent: KubeObject
  readonly children: WireObjectMap
  readonly related: WireObjectMap
  readonly finalizing: boolean
}

/** A DecoratorController sync or finalize request on the wire; the target is `object`. */
export interface WireDecoratorSyncRequest {
  readonly controller: KubeObject
  readonly object: KubeObject
  readonly attachments: WireObjectMap
  readonly related: WireObjectMap
  readonly finalizing: boolean
}

/** A customize request on the wire (there is no `finalizing` field). */
export interface WireCustomizeRequest {
  readonly controller: KubeObject
  readonly parent: KubeObject
}

/** Encodes a CompositeController sync or finalize request. */
export function encodeCompositeSyncRequest(
  request: CompositeSyncRequest,
  encodeObjectMap: ObjectMapEncoder
): WireCompositeSyncRequest {
  return {
    controller: controllerForHook(request.controller),
    parent: request.parent,
    children: encodeObjectMap(request.children, request.parent),
    related: encodeObjectMap(request.related, request.parent),
    finalizing: request.finalizing,
  }
}

/** Encodes a DecoratorController sync or finalize request. */
export function encodeDecoratorSyncRequest(
  request: DecoratorSyncRequest,
  encodeObjectMap: ObjectMapEncoder
): WireDecoratorSyncRequest {
  return {
    controller: controllerForHook(request.controller),
    object: request.object,
    attachments: encodeObjectMap(request.attachments, request.object),
    related: encodeObjectMap(request.related, request.object),
    finalizing: request.finalizing,
  }
}

/** Encodes a customize request (the same for v1 and v2). */
export function encodeCustomizeRequest(request: CustomizeRequest): WireCustomizeRequest {
  return { controller: controllerForHook(request.controller), parent: request.parent }
}

/**
 * Returns the CompositeController or DecoratorController as upstream sends it: with
 * `status: {}`.
 *
 * @remarks
 * Upstream decodes the controller into a typed struct whose status type has no fields, so hooks
 * always see an empty status object, whatever the stored object holds.
 */
export function controllerForHook(controller: KubeObject): KubeObject {
  return { ...controller, status: {} }
}
