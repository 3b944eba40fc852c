/**
 * One resource's collection in the in-memory API server: its objects by key, the history of its
 * changes (for watches that replay from a resourceVersion) and its open watches.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { ScopeMatcher, WatchChannel } from './fake-watch.js'

/** The type of a change, as its watch event names it. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED'

/** One change of a collection, kept for watches that replay from a resourceVersion. */
export interface Change {
  readonly rv: number
  readonly type: ChangeType
  readonly object: KubeObject
  readonly old: KubeObject | undefined
}

/** A watch on a collection and the scope it sees. */
export interface OpenWatch {
  readonly channel: WatchChannel
  readonly matches: ScopeMatcher
}

/** The objects of one resource, their change history and their open watches. */
export interface Collection {
  readonly ref: ResourceRef
  readonly statusSubresource: boolean
  readonly objects: Map<string, KubeObject>
  history: Change[]
  readonly watches: Set<OpenWatch>
}

/** The objects of a store in key order: lists are sorted, as the real server's are. */
export function sortedByKey(objects: ReadonlyMap<string, KubeObject>): KubeObject[] {
  return [...objects.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, object]) => object)
}
