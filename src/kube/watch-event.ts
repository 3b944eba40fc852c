import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { isJsonObject } from '../core/kube-object.js'
import type { KubeObject } from '../core/kube-object.js'

/** The event types of a Kubernetes watch stream. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/** One event of a watch stream; for `ERROR`, `object` is a `Status`. */
export interface WatchEvent {
  readonly type: WatchEventType
  readonly object: KubeObject
}

const TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'])

/** Raised for a watch line that is not a watch event; a stream with one cannot be trusted. */
export class WatchDecodeError extends Error {
  override readonly name = 'WatchDecodeError'
}

/** Decodes one line of a watch stream. */
export function parseWatchLine(line: string): WatchEvent {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    throw new WatchDecodeError(`watch stream sent invalid JSON: ${line.slice(0, 200)}`, {
      cause: error,
    })
  }
  if (!isJsonObject(value) || typeof value['type'] !== 'string' || !TYPES.has(value['type'])) {
    throw new WatchDecodeError(`watch stream sent an unknown event: ${line.slice(0, 200)}`)
  }
  if (!isJsonObject(value['object'])) {
    throw new WatchDecodeError(`watch event without an object: ${line.slice(0, 200)}`)
  }
  return { type: value['type'] as WatchEventType, object: value['object'] as KubeObject }
}

/**
 * Reads newline-delimited watch events from a response body until it ends; `onBytes` is told the
 * length of each chunk as it arrives (for metrics: no event is serialized again to be measured).
 */
export async function* readWatchEvents(
  body: Readable,
  onBytes?: (bytes: number) => void
): AsyncGenerator<WatchEvent> {
  const lines = createInterface({ input: body, crlfDelay: Infinity })
  // Attached in the same tick as readline's own listener, so both see every chunk.
  if (onBytes !== undefined)
    body.on('data', (chunk: Buffer | string) => {
      onBytes(chunk.length)
    })
  try {
    for await (const line of lines) {
      if (line.trim() !== '') yield parseWatchLine(line)
    }
  } finally {
    lines.close()
    body.destroy()
  }
}
