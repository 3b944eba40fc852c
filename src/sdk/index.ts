/**
 * The hook SDK: write Metacontroller hooks (CompositeController and DecoratorController) in
 * TypeScript with typed parents, children, attachments and status; serve them as webhooks, or run
 * them in-process in the engine.
 *
 * @example
 * ```ts
 * import { defineCompositeHook, kubeObject, serveHooks } from 'metacontroller-ts'
 *
 * const sync = defineCompositeHook(({ parent }) => ({
 *   status: { ok: true },
 *   children: [kubeObject('v1', 'ConfigMap', { name: parent.metadata.name ?? '' }, { data: {} })],
 * }))
 * await serveHooks({ '/sync': sync }, { port: 8080 })
 * ```
 *
 * @module
 */
export { defineCompositeHook, defineCustomizeHook, defineDecoratorHook } from './hook-types.js'
export type {
  CompositeHook,
  CompositeRequest,
  CompositeResponse,
  CustomizeHook,
  CustomizeHookRequest,
  CustomizeHookResponse,
  DecoratorHook,
  DecoratorRequest,
  DecoratorResponse,
  ChildrenMap,
  Hook,
  ObjectLike,
  ObjectMap,
  TypeKeyOf,
} from './hook-types.js'
export type * from './kube-types.js'
export { countObserved, kubeObject, listObserved, typeKey } from './object-helpers.js'
export type { ChildMetadata, ObservedOf } from './object-helpers.js'
export { serveHooks } from './serve-hooks.js'
export type { HookServer, ServeHooksOptions } from './serve-hooks.js'
export { inProcessDecoratorHooks, inProcessHooks } from './in-process.js'
export type { EngineCompositeHooks, EngineDecoratorHooks } from './in-process.js'
export { callCompositeHook, callDecoratorHook } from './call-hook.js'
export type {
  CheckedCompositeResponse,
  CheckedDecoratorResponse,
  CompositeFixture,
  DecoratorFixture,
  HookFixtureOptions,
} from './call-hook.js'
export type { KubeObject, ObjectMeta, OwnerReference } from '../core/kube-object.js'
export type { RelatedResourceRule } from '../api/hook-model.js'
export { crdVersionSchema, CrdSchemaError } from './crd-schema.js'
export type { CrdSchema, CrdVersionSchema } from './crd-schema.js'
export { crdToTypeScript, schemaToType } from './crd-types.js'
export { validateAgainstSchema } from './schema-validation.js'
export type { SchemaViolation } from './schema-validation.js'
