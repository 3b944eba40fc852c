/**
 * An {@link EventSink} that keeps what it is given, so tests can assert on the events a sync
 * records without an API server.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { EventSink, EventType } from '../events/event-recorder.js'

/** One recorded event. */
export interface RecordedEvent {
  /** The object key of the object the event is about (`namespace/name`). */
  readonly object: string
  /** The UID of that object, to tell a recreated object from its predecessor. */
  readonly uid: string | undefined
  readonly type: EventType
  readonly reason: string
  readonly message: string
}

/** Records every event in order. */
export class RecordingEventSink implements EventSink {
  readonly #events: RecordedEvent[] = []

  /** The events recorded so far. */
  get events(): readonly RecordedEvent[] {
    return [...this.#events]
  }

  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    this.#events.push({
      object: objectKey(object),
      uid: object.metadata.uid,
      type,
      reason,
      message,
    })
  }

  /** The events about one object (by object key) with this reason. */
  about(key: string, reason: string): RecordedEvent[] {
    return this.#events.filter((e) => e.object === key && e.reason === reason)
  }
}
