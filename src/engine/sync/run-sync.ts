/**
 * The one sync pipeline both controller kinds run for a parent (a decorator's target), from the
 * cached object to the writes: scope → finalizer → choose hook → observe → call hook → plan →
 * apply (children and status). What differs per kind is a {@link SyncStrategy}: what to observe,
 * how to build the request and ask the hook, and how to apply the answer.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isDeleting } from '../../core/owner-references.js'
import type { SyncHooks } from '../../api/controller-hooks.js'
import type { HookEvent } from '../../api/hook-model.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { EventSink } from '../events/event-recorder.js'
import { callHook } from './call-hook.js'
import { chooseHook } from './choose-hook.js'
import { hasFinalizer, syncFinalizer } from './finalizer-step.js'
import type { FinalizerTarget } from './finalizer-step.js'
import type { SyncPlan } from './plan-sync.js'
import { recordHookEvents } from './record-hook-events.js'

/** What the pipeline itself reads of a sync or finalize response. */
export interface SyncResponse {
  readonly resyncAfterMs: number
  readonly events?: readonly HookEvent[]
}

/** The hook's answer for one sync: the response to apply, and whatever the kind adds to it. */
export interface SyncAnswer<Response extends SyncResponse> {
  readonly response: Response
}

/** What the apply step is given: the parent, what was observed, the answer and its plan. */
export interface SyncOutcome<Observed, Answer> {
  readonly parent: KubeObject
  readonly observed: Observed
  readonly answer: Answer
  readonly plan: SyncPlan
}

/** A hook call of this sync: the chosen hook, timed and logged. */
export type HookCall<Request, Response> = (request: Request) => Promise<Response>

/**
 * The part of the pipeline each controller kind supplies.
 *
 * @typeParam Observed - what the kind observes of a parent (its children or attachments)
 * @typeParam Answer - the hook's answer as the kind plans and applies it
 */
export interface SyncStrategy<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
> {
  /** Where the finalizer is written. */
  readonly finalizer: FinalizerTarget
  /** Whether the controller puts a finalizer on its parents (it has a finalize hook). */
  readonly finalizerEnabled: boolean
  readonly hooks: SyncHooks<Request, Response>
  /** Where the events a response asks for are recorded; absent drops them. */
  readonly events: EventSink | undefined
  /** Tells whether a parent matches the controller's own selectors. */
  matchesScope(parent: KubeObject): boolean
  /** What a sync does when the controller has no hook for this parent. */
  withoutHook(parent: KubeObject): Action
  /** Observes the parent's children (or attachments): claims, reads caches. */
  observe(parent: KubeObject, signal: AbortSignal): Promise<Observed>
  /** Builds the requests and calls the hook (once, or once per revision) for the answer. */
  ask(
    parent: KubeObject,
    observed: Observed,
    hook: 'sync' | 'finalize',
    call: HookCall<Request, Response>,
    signal: AbortSignal
  ): Promise<Answer>
  /** Checks the answer and plans the writes; pure, throws on a bad answer. */
  plan(parent: KubeObject, observed: Observed, answer: Answer): SyncPlan
  /**
   * Writes what the plan says: the parent's metadata, the children, the status. Returns false
   * when the parent went away meanwhile (its next event syncs it again).
   */
  apply(outcome: SyncOutcome<Observed, Answer>, signal: AbortSignal, log: Logger): Promise<boolean>
}

/**
 * Syncs one parent: the scope check, the finalizer step, the hook choice, the observation, the
 * hook call, the plan (every check of the answer before any write), the hook's events and the
 * writes. Returns the loop's next action: the answer's `resyncAfterSeconds`, or wait for a
 * change.
 */
export async function runSync<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  strategy: SyncStrategy<Observed, Request, Response, Answer>,
  cached: KubeObject,
  signal: AbortSignal,
  log: Logger
): Promise<Action> {
  const inScope = (p: KubeObject): boolean =>
    hasFinalizer(p, strategy.finalizer.finalizer) || strategy.matchesScope(p)
  if (!inScope(cached)) return Action.awaitChange()
  const parent = await syncFinalizer(strategy.finalizer, cached, strategy.finalizerEnabled, signal)
  if (parent === undefined || !inScope(parent)) return Action.awaitChange()
  const choice = chooseHook({
    syncEnabled: strategy.hooks.sync !== undefined,
    finalizeEnabled: strategy.hooks.finalize !== undefined,
    deleting: isDeleting(parent),
    inScope: strategy.matchesScope(parent),
  })
  const hook = choice === 'none' ? undefined : strategy.hooks[choice]
  if (choice === 'none' || hook === undefined) return strategy.withoutHook(parent)
  const observed = await strategy.observe(parent, signal)
  const call = (request: Request): Promise<Response> => callHook(hook, choice, request, signal, log)
  const answer = await strategy.ask(parent, observed, choice, call, signal)
  const plan = strategy.plan(parent, observed, answer)
  // The answer passed every check: the events it asks for are recorded, whatever the writes do.
  recordHookEvents(strategy.events, parent, answer.response.events)
  if (!(await strategy.apply({ parent, observed, answer, plan }, signal, log)))
    return Action.awaitChange()
  const { resyncAfterMs } = answer.response
  return resyncAfterMs > 0 ? Action.requeue(resyncAfterMs) : Action.awaitChange()
}
