/**
 * The hook-events step: records the Events a sync or finalize response asked for (our `events`
 * extension) on the parent or target, for both controller kinds.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { HookEvent } from '../../api/hook-model.js'
import type { EventSink } from '../events/event-recorder.js'

/**
 * Records each hook event on `object` through the engine's recorder, so they share its
 * aggregation and per-object spam filter (`--events-qps`, `--events-burst`).
 */
export function recordHookEvents(
  events: EventSink | undefined,
  object: KubeObject,
  hookEvents: readonly HookEvent[] | undefined
): void {
  if (events === undefined) return
  for (const event of hookEvents ?? []) {
    events.record(object, event.type, event.reason, event.message)
  }
}
