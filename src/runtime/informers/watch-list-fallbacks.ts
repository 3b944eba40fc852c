/**
 * What informers remember about streaming initial lists: a resource whose API server refused one
 * is listed from then on, by every informer of it, without asking again.
 *
 * @module
 */

/** Whether streaming initial lists of one resource were refused; shared by its informers. */
export interface WatchListFallback {
  /** True once the server refused a streaming initial list of the resource. */
  readonly refused: boolean
  /** Records the refusal: informers of the resource list and watch from now on. */
  refuse(): void
}

/** Creates a {@link WatchListFallback} of its own, for an informer that shares none. */
export function watchListFallback(): WatchListFallback {
  let refused = false
  return {
    get refused() {
      return refused
    },
    refuse: () => {
      refused = true
    },
  }
}

/** One {@link WatchListFallback} per resource, for the informers of one `SharedInformers`. */
export class WatchListFallbacks {
  readonly #byResource = new Map<string, WatchListFallback>()

  /** The fallback of the resource named `resource` (any stable key: group, version, plural). */
  of(resource: string): WatchListFallback {
    let fallback = this.#byResource.get(resource)
    if (fallback === undefined) {
      fallback = watchListFallback()
      this.#byResource.set(resource, fallback)
    }
    return fallback
  }
}
