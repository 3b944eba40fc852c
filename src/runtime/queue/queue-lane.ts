/**
 * One priority lane of a {@link WorkQueue}: its keys in FIFO order.
 *
 * @module
 */

/** An entry of a lane's buffer; stale once its key was removed or queued again later. */
interface LaneEntry<K> {
  readonly key: K
  readonly seq: number
}

/**
 * Keeps the keys of one priority lane in FIFO order, with O(1) push, shift and delete.
 *
 * @remarks
 * Deleting (to promote a key to the other lane) only forgets the key; its buffer entry turns
 * stale and is skipped when reached. The sequence number tells a stale entry from a later push
 * of the same key. Consumed and stale entries are compacted away once they make up half the
 * buffer, which keeps the cost amortised O(1) and the memory proportional to the lane.
 */
export class QueueLane<K> {
  #buffer: LaneEntry<K>[] = []
  #head = 0
  /** Stale entries at or after the head. */
  #stale = 0
  #seq = 0
  readonly #members = new Map<K, number>()

  /** How many keys wait in the lane. */
  get size(): number {
    return this.#members.size
  }

  /** Appends `key` (which must not be in the lane). */
  push(key: K): void {
    const seq = this.#seq++
    this.#members.set(key, seq)
    this.#buffer.push({ key, seq })
  }

  /** Removes `key`; false when it was not in the lane. */
  delete(key: K): boolean {
    if (!this.#members.delete(key)) return false
    this.#stale++
    this.#compactIfSparse()
    return true
  }

  /** Takes the oldest key, or undefined when the lane is empty. */
  shift(): K | undefined {
    while (this.#head < this.#buffer.length) {
      const entry = this.#buffer[this.#head++]
      if (entry === undefined) continue
      if (this.#members.get(entry.key) !== entry.seq) {
        this.#stale--
        continue
      }
      this.#members.delete(entry.key)
      this.#compactIfSparse()
      return entry.key
    }
    return undefined
  }

  #compactIfSparse(): void {
    if (this.#members.size === 0) {
      this.#buffer = []
      this.#head = 0
      this.#stale = 0
      return
    }
    const dead = this.#head + this.#stale
    if (dead < 1024 || dead * 2 < this.#buffer.length) return
    this.#buffer = this.#buffer
      .slice(this.#head)
      .filter((entry) => this.#members.get(entry.key) === entry.seq)
    this.#head = 0
    this.#stale = 0
  }
}
