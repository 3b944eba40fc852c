/**
 * One hook protocol version as a codec: requests to wire JSON, response bodies to the model.
 *
 * @remarks
 * The v1 and v2 formats share field names; they differ in how object maps are keyed and filtered
 * and in the default decoding strictness. A codec is built from exactly those two differences
 * (see `v1.ts` and `v2.ts`), so nothing outside this folder needs to know which version it talks.
 *
 * @module
 */
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  HookVersion,
  ResponseDecodeMode,
} from '../hook-model.js'
import {
  decodeCompositeSyncResponse,
  decodeCustomizeResponse,
  decodeDecoratorSyncResponse,
} from './decode-response.js'
import type { DecodedResponse } from './response-reader.js'
import {
  encodeCompositeSyncRequest,
  encodeCustomizeRequest,
  encodeDecoratorSyncRequest,
} from './encode-request.js'
import type {
  WireCompositeSyncRequest,
  WireCustomizeRequest,
  WireDecoratorSyncRequest,
} from './encode-request.js'
import type { ObjectMapEncoder } from './object-map.js'

/** Options for decoding a sync or finalize response. */
export interface SyncDecodeOptions {
  /** The hook that answered, for messages; `sync` unless given. */
  readonly hook?: 'sync' | 'finalize' | undefined
  /** `webhook.responseUnMarshallMode`; the version's default unless given. */
  readonly mode?: ResponseDecodeMode | undefined
}

/** Options for decoding a customize response. */
export interface CustomizeDecodeOptions {
  /** `webhook.responseUnMarshallMode`; the version's default unless given. */
  readonly mode?: ResponseDecodeMode | undefined
}

/** Encodes requests for, and decodes responses from, hooks of one protocol version. */
export interface HookCodec {
  readonly version: HookVersion
  /** The decode mode used when `webhook.responseUnMarshallMode` is not set. */
  readonly defaultMode: ResponseDecodeMode
  /** How this version keys and filters `children`, `attachments` and `related`. */
  readonly encodeObjectMap: ObjectMapEncoder
  /** Encodes a CompositeController sync or finalize request, ready for `JSON.stringify`. */
  encodeCompositeSync(request: CompositeSyncRequest): WireCompositeSyncRequest
  /** Encodes a DecoratorController sync or finalize request, ready for `JSON.stringify`. */
  encodeDecoratorSync(request: DecoratorSyncRequest): WireDecoratorSyncRequest
  /** Encodes a customize request, ready for `JSON.stringify`. */
  encodeCustomize(request: CustomizeRequest): WireCustomizeRequest
  /** Decodes a response body; throws a `HookResponseError` when it cannot be used. */
  decodeCompositeSync(
    body: string,
    options?: SyncDecodeOptions
  ): DecodedResponse<CompositeSyncResponse>
  /** Decodes a response body; throws a `HookResponseError` when it cannot be used. */
  decodeDecoratorSync(
    body: string,
    options?: SyncDecodeOptions
  ): DecodedResponse<DecoratorSyncResponse>
  /** Decodes a response body; throws a `HookResponseError` when it cannot be used. */
  decodeCustomize(
    body: string,
    options?: CustomizeDecodeOptions
  ): DecodedResponse<CustomizeResponse>
}

/** What distinguishes one hook protocol version from another. */
export interface HookCodecDefinition {
  readonly version: HookVersion
  readonly defaultMode: ResponseDecodeMode
  readonly encodeObjectMap: ObjectMapEncoder
}

/** Builds a {@link HookCodec} from a version's differences. */
export function createHookCodec(definition: HookCodecDefinition): HookCodec {
  const { version, defaultMode, encodeObjectMap } = definition
  const source = (
    hook: 'sync' | 'finalize' | 'customize',
    mode: ResponseDecodeMode | undefined
  ): { version: HookVersion; hook: typeof hook; mode: ResponseDecodeMode } => ({
    version,
    hook,
    mode: mode ?? defaultMode,
  })
  return {
    version,
    defaultMode,
    encodeObjectMap,
    encodeCompositeSync: (request) => encodeCompositeSyncRequest(request, encodeObjectMap),
    encodeDecoratorSync: (request) => encodeDecoratorSyncRequest(request, encodeObjectMap),
    encodeCustomize: (request) => encodeCustomizeRequest(request),
    decodeCompositeSync: (body, options) =>
      decodeCompositeSyncResponse(body, source(options?.hook ?? 'sync', options?.mode)),
    decodeDecoratorSync: (body, options) =>
      decodeDecoratorSyncResponse(body, source(options?.hook ?? 'sync', options?.mode)),
    decodeCustomize: (body, options) =>
      decodeCustomizeResponse(body, source('customize', options?.mode)),
  }
}
