/**
 * The DecoratorController strategy of the generic parent loop: one parent source per resource
 * rule (the targets), one child source per attachment rule, event mapping, and the pipeline that
 * syncs a key ({@link decoratorStrategy} through {@link syncParent}).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { keyOf, objectKey } from '../../core/object-key.js'
import { controllerRefOf, groupOf } from '../../core/owner-references.js'
import { DECORATOR_CONTROLLER_ANNOTATION } from '../../api/decorator-controller-spec.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { EventSink } from '../events/event-recorder.js'
import type {
  ControllerCaches,
  ControllerKind,
  ControllerKindRuntime,
  WatchSource,
} from '../loop/parent-controller.js'
import type { ObjectReader } from '../../runtime/informers/object-store.js'
import { isStatusOnlyUpdate } from '../loop/status-only-update.js'
import { cachesByRole } from '../loop/caches-by-role.js'
import { hasFinalizer, setFinalizer } from '../sync/finalizer-step.js'
import { syncParent } from '../sync/sync-parent.js'
import type { SyncObserver } from '../sync/sync-observer.js'
import { decoratorStrategy } from './sync-decorator-target.js'
import type { DecoratorController, DecoratorWrites, TargetRule } from './sync-decorator-target.js'

/** Everything a decorator controller needs, resolved when it is built. */
export interface DecoratorKindOptions {
  readonly controller: DecoratorController
  readonly writes: DecoratorWrites
  /** The resource rules, one per group and kind (a later rule replaces an earlier one). */
  readonly rules: readonly TargetRule[]
  readonly resyncPeriodMs: number | undefined
  readonly events: EventSink
  readonly log: Logger
  /** Told what each sync did; absent: nobody asks. */
  readonly onSync?: SyncObserver
}

/** Joins a rule index and an object key into a queue key. */
function targetKey(rule: number, object: KubeObject): string {
  return `${rule}:${objectKey(object)}`
}

/**
 * Splits a queue key into its rule index and object key. Every key has this one form, deletes
 * included (upstream's tombstone keys fail to split, spec §3.3).
 */
function splitKey(key: string): { rule: number; key: string } | undefined {
  const colon = key.indexOf(':')
  const rule = Number(key.slice(0, colon))
  return colon < 1 || !Number.isInteger(rule) ? undefined : { rule, key: key.slice(colon + 1) }
}

/**
 * Finds the index of the resource rule of an apiVersion and kind. Rules are found by group and
 * kind: the version of a target or an owner reference is ignored.
 */
function ruleFinder(
  rules: readonly TargetRule[]
): (apiVersion: string, kind: string) => number | undefined {
  const ruleIndex = new Map(
    rules.map((rule, index) => [`${rule.info.ref.group}/${rule.info.kind}`, index])
  )
  return (apiVersion, kind) => ruleIndex.get(`${groupOf(apiVersion)}/${kind}`)
}

/** The cached target a queue key names. */
function targetOfKey(key: string, caches: ControllerCaches): KubeObject | undefined {
  const parts = splitKey(key)
  return parts === undefined ? undefined : caches.parents[parts.rule]?.store.get(parts.key)
}

/** Builds a DecoratorController's {@link ControllerKind}. */
export function decoratorKind(options: DecoratorKindOptions): ControllerKind {
  const { controller, writes, rules } = options
  const sources = childSources(controller)
  const ruleOf = ruleFinder(rules)
  const isInScope = (rule: TargetRule, target: KubeObject): boolean =>
    hasFinalizer(target, controller.finalizer) || rule.matches(target)
  const targetsOf = (caches: ControllerCaches, index: number) => caches.parents[index]?.store
  // Set once the DecoratorController is deleted. The loop stops its workers before `release`;
  // this guards against any sync that would still run and put a finalizer straight back.
  let released = false

  return {
    name: `DecoratorController-${controller.name}`,
    parentSources: rules.map((rule) => ({ ref: rule.info.ref })),
    childSources: sources,
    resyncPeriodMs: options.resyncPeriodMs,

    parentKeys(target, old) {
      const index = ruleOf(target.apiVersion, target.kind)
      const rule = index === undefined ? undefined : rules[index]
      if (index === undefined || rule === undefined || !isInScope(rule, target)) return []
      if (old !== undefined && rule.ignoreStatusChanges && isStatusOnlyUpdate(old, target))
        return []
      return [targetKey(index, target)]
    },

    childKeys: decoratorChildKeys(controller.name, rules, ruleOf),
    parentOf: targetOfKey,

    allParentKeys(caches) {
      return rules.flatMap((rule, index) =>
        (targetsOf(caches, index)?.list() ?? [])
          .filter((target) => isInScope(rule, target))
          .map((target) => targetKey(index, target))
      )
    },

    start(runtime) {
      bindRelated(rules, runtime, (index) => targetsOf(runtime.caches, index), isInScope)
    },

    async stop() {
      await Promise.all(rules.map((rule) => rule.related?.stop() ?? Promise.resolve()))
    },

    // Upstream leaves its finalizer on every target when a DecoratorController is deleted, so
    // deleting a target then hangs forever (#1062); here the deletion releases them.
    async release(caches, signal) {
      released = true
      await releaseTargets(controller, writes, rules, caches, signal)
    },

    async sync(key, context, caches) {
      if (released) return Action.awaitChange()
      const parts = splitKey(key)
      const rule = parts === undefined ? undefined : rules[parts.rule]
      const cached = parts === undefined ? undefined : targetsOf(caches, parts.rule)?.get(parts.key)
      if (rule === undefined || cached === undefined) return Action.awaitChange()
      const log = options.log.child({ parent: `${cached.kind} ${objectKey(cached)}` })
      const attachments = cachesByRole(sources, caches.children)
      const sync = {
        controller: { kind: 'DecoratorController' as const, name: controller.name },
        parent: cached,
        parentRef: rule.info.ref,
        types: controller.attachments.types,
        client: writes.client,
        strategyFor: (client: ObjectClient) =>
          decoratorStrategy(controller, { ...writes, client }, rule, attachments),
        events: options.events,
        onSync: options.onSync,
      }
      return syncParent(sync, context.signal, log)
    },
  }
}

/** Lets each rule's related objects wake the in-scope targets they concern. */
function bindRelated(
  rules: readonly TargetRule[],
  runtime: ControllerKindRuntime,
  targetsOf: (index: number) => ObjectReader | undefined,
  isInScope: (rule: TargetRule, target: KubeObject) => boolean
): void {
  rules.forEach((rule, index) => {
    rule.related?.bind({
      // Both selectors decide which targets a related change wakes (upstream #1253).
      list: () => (targetsOf(index)?.list() ?? []).filter((t) => isInScope(rule, t)),
      enqueue: (target) => {
        runtime.enqueue([targetKey(index, target)])
      },
    })
  })
}

/**
 * Maps an attachment's event to its target: only attachments the target controls and that carry
 * this controller's marker wake it. A decorator never adopts, so orphans wake nobody.
 */
function decoratorChildKeys(
  name: string,
  rules: readonly TargetRule[],
  ruleOf: (apiVersion: string, kind: string) => number | undefined
): ControllerKind['childKeys'] {
  return (child, change, old) => {
    if (change === 'update' && old?.metadata.resourceVersion === child.metadata.resourceVersion)
      return []
    const ref = controllerRefOf(child)
    if (ref === undefined) return []
    if (child.metadata.annotations?.[DECORATOR_CONTROLLER_ANNOTATION] !== name) return []
    const index = ruleOf(ref.apiVersion, ref.kind)
    const rule = index === undefined ? undefined : rules[index]
    if (index === undefined || rule === undefined) return []
    const namespace = rule.info.ref.namespaced ? child.metadata.namespace : undefined
    return [`${index}:${keyOf(namespace, ref.name)}`]
  }
}

/** Removes this controller's finalizer from every cached target that carries it. */
async function releaseTargets(
  controller: DecoratorController,
  writes: DecoratorWrites,
  rules: readonly TargetRule[],
  caches: ControllerCaches,
  signal: AbortSignal
): Promise<void> {
  for (const [index, rule] of rules.entries()) {
    const target = { client: writes.client, ref: rule.info.ref, finalizer: controller.finalizer }
    for (const object of caches.parents[index]?.store.list() ?? []) {
      if (hasFinalizer(object, controller.finalizer))
        await setFinalizer(target, object, false, signal)
    }
  }
}

/** One watched source per attachment rule, each named by the GVK key of its rule. */
function childSources(controller: DecoratorController): (WatchSource & { role: string })[] {
  return [...controller.attachments.types].map(([role, type]) => ({ role, ref: type.ref }))
}
