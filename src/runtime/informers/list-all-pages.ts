/**
 * An informer's list: every page of a collection, restarted from the first page when its
 * continue token expires (the snapshot it pointed into is gone).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { GoneError } from '../../kube/api-error.js'
import type { ListWatcher } from './list-watcher.js'
import { untilAborted } from './until-aborted.js'

/** How many times one list restarts after an expired continue token before it counts as failed. */
const maxListRestarts = 3

/** A whole collection and the resourceVersion to watch it from. */
export interface ListedCollection<T extends KubeObject> {
  readonly items: T[]
  readonly resourceVersion: string
}

/**
 * Lists every page of `source`, `pageSize` objects at a time; an expired continue token restarts
 * the list (three times at most, then its 410 is thrown). `onPage` runs as each page arrives: a
 * long list shows its progress.
 */
export async function listAllPages<T extends KubeObject>(
  source: ListWatcher<T>,
  pageSize: number,
  signal: AbortSignal,
  onPage?: () => void
): Promise<ListedCollection<T>> {
  const items: T[] = []
  let token: string | undefined
  let resourceVersion: string | undefined
  let restarts = 0
  for (;;) {
    let page
    try {
      page = await untilAborted(
        source.listPage({
          limit: pageSize,
          signal,
          ...(token === undefined ? {} : { continue: token }),
        }),
        signal
      )
    } catch (error) {
      // An expired continue token means the snapshot is gone: start the list over.
      if (error instanceof GoneError && token !== undefined && restarts < maxListRestarts) {
        restarts++
        items.length = 0
        token = undefined
        continue
      }
      throw error
    }
    onPage?.()
    items.push(...page.items)
    resourceVersion = page.metadata.resourceVersion ?? ''
    token = page.metadata.continue
    if (token === undefined || token === '') break
  }
  return { items, resourceVersion }
}
