/**
 * The engine's sync run offline (`metactl render`): the very pipeline `metactl run` runs
 * ({@link runSync} with the controller kind's strategy), over an in-memory cluster seeded from
 * objects, through a {@link WriteRecorder}. What the command line prints comes from what this
 * run captured: the hook's answer, the engine's plan and the writes the engine made.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { ObjectClient } from '../kube/object-client.js'
import { silentLogger } from '../runtime/diagnostics/logger.js'
import { InvalidDesiredChildError } from '../api/desired-children.js'
import type { SyncPlan } from '../engine/sync/plan-sync.js'
import type { ChildType } from '../engine/children/plan-children.js'
import { writtenPlan } from '../engine/sync/written-plan.js'
import type { WrittenPlan } from '../engine/sync/written-plan.js'
import { runSync } from '../engine/sync/run-sync.js'
import type { SyncAnswer, SyncResponse, SyncStrategy } from '../engine/sync/run-sync.js'
import { WriteRecorder } from '../engine/sync/write-recorder.js'
import type { RecordedWrite } from '../engine/sync/write-recorder.js'
import type { FakeCluster } from '../in-memory/fake-cluster.js'
import { messageOf } from '../core/message-of.js'
import { OfflineError } from './offline-error.js'
import type { OfflineHooks } from './offline-hooks.js'
import { writtenChildren } from './written-children.js'

/** What one render captured of the engine's pipeline. */
export interface OfflineSyncRun<Observed, Answer> extends OfflineRun {
  readonly observed: Observed
  readonly answer: Answer
  /** The parent as the apply step got it (after the finalizer step). */
  readonly parent: KubeObject
}

/** What both kinds print from a render's run. */
export interface OfflineRun {
  /** The writes of the apply step; the claim and finalizer writes before it are left out. */
  readonly writes: readonly RecordedWrite[]
  /** The engine's plan as those writes (and the next sync's creates) carried it out. */
  readonly printed: WrittenPlan
  /** The desired children, as the answer was prepared. */
  readonly desired: readonly KubeObject[]
  /** The desired children as the engine leaves them. */
  readonly written: readonly KubeObject[]
}

/** What {@link runOfflineSync} runs. */
export interface OfflineSync<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
> {
  readonly cluster: FakeCluster
  readonly parentRef: ResourceRef
  readonly parent: KubeObject
  /** The hooks the strategy calls; closed once the run is done. */
  readonly hooks: OfflineHooks<Request, Response>
  /** What the answer holds: `children` or `attachments`, for messages. */
  readonly noun: string
  /** The kind's strategy over this client, with caches read from the cluster as it is now. */
  strategy(client: ObjectClient): SyncStrategy<Observed, Request, Response, Answer>
  /** Called once with what was observed, before the hook is asked. */
  observed?(parent: KubeObject, observed: Observed): void
  /** The child types of the plan, once the answer corrected the kinds. */
  types(observed: Observed): ReadonlyMap<string, ChildType>
}

interface Capture<Observed, Answer> {
  observed?: Observed
  answer?: Answer
  plan?: SyncPlan
  parent?: KubeObject
  mark?: number
}

/** The strategy with each step's result captured, and hook and answer errors made CLI errors. */
function capturing<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  pipeline: OfflineSync<Observed, Request, Response, Answer>,
  strategy: SyncStrategy<Observed, Request, Response, Answer>,
  recorder: WriteRecorder,
  capture: Capture<Observed, Answer>
): SyncStrategy<Observed, Request, Response, Answer> {
  return {
    ...strategy,
    observe: async (parent, signal) => {
      const observed = await strategy.observe(parent, signal)
      capture.observed = observed
      pipeline.observed?.(parent, observed)
      return observed
    },
    ask: async (parent, observed, hook, call, signal) => {
      let answer: Answer
      try {
        answer = await strategy.ask(parent, observed, hook, call, signal)
      } catch (error) {
        if (error instanceof OfflineError) throw error
        throw new OfflineError(`${pipeline.hooks.description} failed: ${messageOf(error)}`)
      }
      capture.answer = answer
      return answer
    },
    plan: (parent, observed, answer) => {
      try {
        capture.plan = strategy.plan(parent, observed, answer)
      } catch (error) {
        if (!(error instanceof InvalidDesiredChildError)) throw error
        throw new OfflineError(
          `${pipeline.hooks.description} returned invalid ${pipeline.noun}: ${error.message}`
        )
      }
      return capture.plan
    },
    apply: (outcome, signal, log) => {
      capture.parent = outcome.parent
      capture.mark = recorder.mark()
      return strategy.apply(outcome, signal, log)
    },
  }
}

/** Runs one sync; an error of the apply step is returned, any other thrown. */
async function syncOnce<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  strategy: SyncStrategy<Observed, Request, Response, Answer>,
  parent: KubeObject,
  capture: Capture<Observed, Answer>
): Promise<unknown> {
  const signal = new AbortController().signal
  try {
    await runSync(strategy, parent, signal, silentLogger)
    return undefined
  } catch (error) {
    if (capture.mark !== undefined) return error
    if (error instanceof OfflineError) throw error
    throw new OfflineError(`cannot render: ${messageOf(error)}`)
  }
}

/**
 * The creates of the sync after this one, which gets the same answer (the hook is not asked
 * again) without the rollout, whose revisions this one wrote.
 */
async function nextCreates<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  pipeline: OfflineSync<Observed, Request, Response, Answer>,
  answer: Answer
): Promise<RecordedWrite[]> {
  const { parentRef, parent } = pipeline
  const name = parent.metadata.name ?? ''
  const current = pipeline.cluster.peek(parentRef, name, parent.metadata.namespace)
  if (current === undefined) return []
  const recorder = new WriteRecorder(pipeline.cluster)
  const strategy = pipeline.strategy(recorder)
  // Both kinds' answers are the response plus what the kind adds (a rollout): the response alone.
  const again = { response: answer.response } as Answer
  try {
    await runSync(
      { ...strategy, ask: () => Promise.resolve(again) },
      current,
      new AbortController().signal,
      silentLogger
    )
  } catch {
    // What this sync cannot write, the first one already reported.
  }
  return recorder.writes.filter((w) => w.method === 'create' && w.error === undefined)
}

/**
 * Runs the engine's pipeline for the seeded parent, and, when it deleted children to recreate
 * them, the next sync too (with the same answer), for the objects it creates.
 */
export async function runOfflineSync<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  pipeline: OfflineSync<Observed, Request, Response, Answer>
): Promise<OfflineSyncRun<Observed, Answer>> {
  const recorder = new WriteRecorder(pipeline.cluster)
  const capture: Capture<Observed, Answer> = {}
  const strategy = capturing(pipeline, pipeline.strategy(recorder), recorder, capture)
  let failure: unknown
  let next: RecordedWrite[] = []
  try {
    failure = await syncOnce(strategy, pipeline.parent, capture)
    const { plan, answer } = capture
    if (plan !== undefined && answer !== undefined && plan.children.recreate.length > 0)
      next = failure === undefined ? await nextCreates(pipeline, answer) : []
  } finally {
    await pipeline.hooks.close()
  }
  const { observed, answer, plan, parent, mark } = capture
  if (observed === undefined || answer === undefined || plan === undefined) {
    throw new OfflineError(
      `the engine would not sync ${objectKey(pipeline.parent)}: it is out of its scope`
    )
  }
  const writes = mark === undefined ? [] : recorder.since(mark)
  const types = pipeline.types(observed)
  const printed = writtenPlan({ plan, types, writes, next, failure })
  return {
    observed,
    answer,
    parent: parent ?? pipeline.parent,
    writes,
    printed,
    desired: [...plan.desired.values()].flatMap((list) => [...list.values()]),
    written: writtenChildren(plan, printed),
  }
}
