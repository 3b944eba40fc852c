/**
 * Hook responses back to wire JSON: the inverse of the decoders in `src/api/wire/`, for the
 * round-trip properties. The engine only ever decodes responses, so this lives with the tests.
 *
 * @module
 */
import type {
  CompositeSyncResponse,
  CustomizeResponse,
  DecoratorSyncResponse,
} from '../../src/api/hook-model.js'

/** A CompositeController sync response as a hook writes it. */
export function encodeCompositeResponse(response: CompositeSyncResponse): object {
  const { status, children, resyncAfterMs, finalized, events } = response
  return {
    status,
    children,
    resyncAfterSeconds: resyncAfterMs / 1000,
    finalized,
    ...(events === undefined ? {} : { events }),
  }
}

/** A DecoratorController sync response as a hook writes it. */
export function encodeDecoratorResponse(response: DecoratorSyncResponse): object {
  const { labels, annotations, status, attachments, resyncAfterMs, finalized, events } = response
  return {
    labels,
    annotations,
    status,
    attachments,
    resyncAfterSeconds: resyncAfterMs / 1000,
    finalized,
    ...(events === undefined ? {} : { events }),
  }
}

/** A customize response as a hook writes it (the rules are already in wire form). */
export function encodeCustomizeResponse(response: CustomizeResponse): object {
  return { relatedResources: response.relatedResources }
}
