/**
 * The hooks of each controller kind as plain functions of the internal hook model: what the
 * engine runs (webhooks or in-process functions) and what the SDK's in-process adapters build.
 * They live here, below both, so the engine's kinds and the SDK import them downward.
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
  HookFunction,
} from './hook-model.js'

/** The sync and finalize hooks of one controller; absent means not enabled. */
export interface SyncHooks<Request, Response> {
  readonly sync?: HookFunction<Request, Response>
  readonly finalize?: HookFunction<Request, Response>
}

/** The hooks of a CompositeController; absent means not enabled. */
export interface CompositeHooks extends SyncHooks<CompositeSyncRequest, CompositeSyncResponse> {
  /**
   * Names the related objects sent to sync and finalize (spec §2.5); its answer is cached per
   * parent UID and generation. Its rules follow `spec.hooks.customize.version` (v1 when absent).
   */
  readonly customize?: HookFunction<CustomizeRequest, CustomizeResponse>
  /** Releases what the hooks hold (pooled connections) when the controller stops. */
  readonly close?: () => Promise<void>
}

/** The hooks of a DecoratorController; absent means not enabled. */
export interface DecoratorHooks extends SyncHooks<DecoratorSyncRequest, DecoratorSyncResponse> {
  /** Names the related objects sent to sync and finalize, cached per target UID and generation. */
  readonly customize?: HookFunction<CustomizeRequest, CustomizeResponse>
  /** Releases what the hooks hold (pooled connections) when the controller stops. */
  readonly close?: () => Promise<void>
}
