/**
 * Paginated lists of the in-memory API server: the first page takes a snapshot, and its continue
 * token serves the following pages from that same snapshot, as the real server's consistent
 * lists do.
 *
 * @module
 */
import type { KubeList, KubeObject } from '../core/kube-object.js'

/** The rest of a list, kept for the continue token that resumes it. */
interface ListSnapshot {
  readonly items: KubeObject[]
  readonly rv: number
  readonly offset: number
}

/** The snapshots of the lists being paged through, by continue token. */
export class FakeListPages {
  readonly #snapshots = new Map<string, ListSnapshot>()
  #tokens = 0

  /**
   * One page of at most `limit` objects: of `objects()` at `rv` without a continue token, of the
   * token's snapshot with one (a token is used once). `expired()` is thrown for an unknown token.
   */
  page(
    objects: () => KubeObject[],
    rv: number,
    options: { readonly limit: number; readonly continue?: string | undefined },
    expired: () => Error
  ): KubeList {
    let snapshot: ListSnapshot
    const token = options.continue
    if (token === undefined) {
      snapshot = { items: objects().map((o) => structuredClone(o)), rv, offset: 0 }
    } else {
      const found = this.#snapshots.get(token)
      if (found === undefined) throw expired()
      this.#snapshots.delete(token)
      snapshot = found
    }
    const end = snapshot.offset + Math.max(1, options.limit)
    const metadata: KubeList['metadata'] = { resourceVersion: String(snapshot.rv) }
    if (end < snapshot.items.length) {
      const next = `fake-continue-${++this.#tokens}`
      this.#snapshots.set(next, { ...snapshot, offset: end })
      metadata.continue = next
    }
    return {
      apiVersion: 'v1',
      kind: 'List',
      metadata,
      items: snapshot.items.slice(snapshot.offset, end),
    }
  }
}
