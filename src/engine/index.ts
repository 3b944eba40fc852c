/**
 * The Metacontroller-compatible engine: serve CompositeController and DecoratorController objects
 * from the cluster, or controllers defined in TypeScript with in-process hooks.
 *
 * @example
 * ```ts
 * import { Engine } from 'metacontroller-ts/engine'
 *
 * const engine = await Engine.connect()
 * await engine.start()
 * // ... engine.addCompositeController({ name, spec, hooks: { sync } })
 * await engine.stop()
 * ```
 *
 * @module
 */
export { DEFAULT_REVISION_NAMESPACE, Engine } from './engine.js'
export { DEFAULT_HOOK_MAX_IN_FLIGHT } from './hooks/hook-call-limiter.js'
export type {
  EngineOptions,
  InProcessCompositeController,
  InProcessDecoratorController,
} from './engine.js'
export type { DecoratorHooks } from '../api/controller-hooks.js'
export type { SyncController, SyncObserver, SyncReport } from './sync/sync-observer.js'
export { summarizeWrites, writeKey } from './sync/write-recorder.js'
export { writtenPlan } from './sync/written-plan.js'
export type { PlanEntry, WrittenPlan } from './sync/written-plan.js'
export type { RecordedWrite, WriteMethod, WriteSummary } from './sync/write-recorder.js'
export type { SyncPlan } from './sync/plan-sync.js'
export {
  DECORATOR_CONTROLLER_ANNOTATION,
  decoratorFinalizer,
} from '../api/decorator-controller-spec.js'
export type { CompositeHooks } from '../api/controller-hooks.js'
export type { HookFunction } from '../api/hook-model.js'
export { compositeFinalizer } from './composite/composite-kind.js'
export { CONTROLLER_UID_LABEL } from './composite/composite-selector.js'
export { applyUpdate, setLastApplied, LAST_APPLIED_ANNOTATION } from './children/dynamic-apply.js'
export {
  APPLY_STRATEGIES,
  DEFAULT_SSA_FIELD_MANAGER,
  parseApplyStrategy,
} from './children/child-applier.js'
export type { ApplyStrategy } from './children/child-applier.js'
export type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  ObjectsByType,
} from '../api/hook-model.js'
export { controllerRevisionName, controllerRevisionHash } from './rollout/revision-name.js'
export { REVISION_API_GROUP_LABEL, REVISION_RESOURCE_LABEL } from './rollout/controller-revision.js'
export type { ControllerRevision, RevisionChildren } from './rollout/controller-revision.js'
