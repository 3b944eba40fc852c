/**
 * What a sync did, told to whoever asked (`EngineOptions.onSync`): the parent, the hook that was
 * called, the plan of the answer when it passed every check, the writes the sync made (recorded
 * by a {@link WriteRecorder}, as `metactl render` records its plan), and the error it ended with.
 * `metactl dev` prints its one line per sync from it.
 *
 * @remarks
 * Additive: without an observer a sync runs exactly as before. With one, the sync's client is
 * wrapped for that sync only, so each report holds its own writes and no other sync's.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ChildType } from '../children/plan-children.js'
import type { SyncPlan } from './plan-sync.js'
import type { SyncAnswer, SyncResponse, SyncStrategy } from './run-sync.js'
import { WriteRecorder } from './write-recorder.js'
import type { RecordedWrite } from './write-recorder.js'

/** Which controller a {@link SyncReport} is about. */
export interface SyncController {
  readonly kind: 'CompositeController' | 'DecoratorController'
  readonly name: string
}

/** What one sync of one parent (a decorator's target) did. */
export interface SyncReport {
  readonly controller: SyncController
  /** The cached parent the sync started from. */
  readonly parent: KubeObject
  /** The parent's resource, to tell its own writes from its children's. */
  readonly parentRef: ResourceRef
  /** The child (attachment) types by GVK key, to find their writes (see `writtenPlan`). */
  readonly types: ReadonlyMap<string, ChildType>
  /** The hook that was asked; undefined when none was (out of scope, no hook). */
  readonly hook: 'sync' | 'finalize' | undefined
  /** The plan of the answer; undefined when the sync ended before the answer passed its checks. */
  readonly plan: SyncPlan | undefined
  /** The writes the sync made, in call order; a refused one carries its `error`. */
  readonly writes: readonly RecordedWrite[]
  /** Where the apply step's writes start in `writes` (claims and finalizer come before). */
  readonly applyFrom: number | undefined
  /** What the sync threw; undefined when it succeeded. */
  readonly error: unknown
  readonly durationMs: number
}

/** Receives one report per sync; must not throw (a throw is ignored). */
export type SyncObserver = (report: SyncReport) => void

/** What the pipeline got to in one sync, filled in as it goes. */
interface Progress {
  hook: 'sync' | 'finalize' | undefined
  plan: SyncPlan | undefined
  applyFrom: number | undefined
}

/** The strategy, telling `progress` which hook it asks and the plan it makes. */
function watchedStrategy<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  strategy: SyncStrategy<Observed, Request, Response, Answer>,
  progress: Progress,
  recorder: WriteRecorder
): SyncStrategy<Observed, Request, Response, Answer> {
  return {
    ...strategy,
    ask: (parent, observed, hook, call, signal) => {
      progress.hook = hook
      return strategy.ask(parent, observed, hook, call, signal)
    },
    plan: (parent, observed, answer) => {
      progress.plan = strategy.plan(parent, observed, answer)
      return progress.plan
    },
    apply: (outcome, signal, log) => {
      progress.applyFrom = recorder.mark()
      return strategy.apply(outcome, signal, log)
    },
  }
}

/**
 * Runs one sync and, when there is an observer, reports it: the strategy gets a recording client
 * and is watched for its hook and plan. Without an observer, `run` gets the strategy as it is.
 */
export async function observeSync<
  T,
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  observer: SyncObserver | undefined,
  about: {
    readonly controller: SyncController
    readonly parent: KubeObject
    readonly parentRef: ResourceRef
    readonly types: ReadonlyMap<string, ChildType>
  },
  client: ObjectClient,
  strategyFor: (client: ObjectClient) => SyncStrategy<Observed, Request, Response, Answer>,
  run: (strategy: SyncStrategy<Observed, Request, Response, Answer>) => Promise<T>
): Promise<T> {
  if (observer === undefined) return run(strategyFor(client))
  const recorder = new WriteRecorder(client)
  const progress: Progress = { hook: undefined, plan: undefined, applyFrom: undefined }
  const startedMs = Date.now()
  let error: unknown
  try {
    return await run(watchedStrategy(strategyFor(recorder), progress, recorder))
  } catch (thrown) {
    error = thrown
    throw thrown
  } finally {
    try {
      observer({
        ...about,
        ...progress,
        writes: recorder.writes,
        error,
        durationMs: Date.now() - startedMs,
      })
    } catch {
      // An observer's fault must not become the sync's.
    }
  }
}
