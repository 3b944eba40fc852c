/**
 * Which hashes a replica may serve, through ring changes: the ring all live members agreed on,
 * narrowed by every view this replica announced since (a view it announced is a promise that it
 * stopped serving what that view gives to others).
 *
 * @remarks
 * **Guarantees** {@link RingOwnership.owns} only shrinks between two calls of
 * {@link RingOwnership.serve}; `serve` is the one place where ownership grows.
 *
 * @module
 */
import type { HashRing } from './hash-ring.js'

/** A replica's ownership of hashes. */
export class RingOwnership {
  readonly #self: string
  #serving: HashRing | undefined
  #narrowedBy: HashRing[] = []

  constructor(self: string) {
    this.#self = self
  }

  /** The ring served, undefined before the first agreement or after {@link clear}. */
  get serving(): HashRing | undefined {
    return this.#serving
  }

  /** Tells whether this replica may serve `hash` now. */
  owns(hash: bigint): boolean {
    if (this.#serving?.ownerOf(hash) !== this.#self) return false
    return this.#narrowedBy.every((ring) => ring.ownerOf(hash) === this.#self)
  }

  /** Stops serving what `ring` gives to other members (until the next {@link serve}). */
  narrow(ring: HashRing): void {
    if (this.#serving !== undefined) this.#narrowedBy.push(ring)
  }

  /**
   * Serves what an agreed ring gives this replica: the only way ownership grows.
   *
   * @returns Which hashes this replica gains: those `ring` gives it that it did not own all the
   * time since the previous `serve` (every hash it owns after the first, or after
   * {@link clear}). Since ownership only shrinks in between, that is what it owned just before.
   */
  serve(ring: HashRing): (hash: bigint) => boolean {
    const self = this.#self
    const served = this.#serving
    const narrowedBy = this.#narrowedBy
    const ownedBefore = (hash: bigint): boolean =>
      served?.ownerOf(hash) === self && narrowedBy.every((view) => view.ownerOf(hash) === self)
    this.#serving = ring
    this.#narrowedBy = []
    return (hash) => ring.ownerOf(hash) === self && !ownedBefore(hash)
  }

  /** Serves nothing (shutdown, or this replica's Lease could not be renewed). */
  clear(): void {
    this.#serving = undefined
    this.#narrowedBy = []
  }
}
