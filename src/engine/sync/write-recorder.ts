/**
 * An {@link ObjectClient} that passes every call through and records the writes: what a sync
 * actually did, for `metactl render` (over the in-memory cluster, where the writes are the plan)
 * and `metactl dev` (over a real cluster, one line per sync).
 *
 * @remarks
 * Reads are not recorded. A write is recorded when it settles, successful or not, in the order
 * the calls were made; a failed write keeps its error, so a report can say what was refused.
 * Writes made through another path (server-side apply patches) are not seen here.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { keyOf } from '../../core/object-key.js'
import type {
  DeleteOptions,
  ObjectCallOptions,
  ResourceRef,
  WriteOptions,
} from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import { messageOf } from '../../core/message-of.js'

/** The write calls of an {@link ObjectClient}. */
export type WriteMethod = 'create' | 'update' | 'updateStatus' | 'delete'

/** One write a sync made through a {@link WriteRecorder}. */
export interface RecordedWrite {
  readonly method: WriteMethod
  readonly ref: ResourceRef
  /** The namespace written in; undefined for cluster-scoped resources. */
  readonly namespace: string | undefined
  readonly name: string
  /** The object sent (create, update, updateStatus); absent for a delete. */
  readonly sent?: KubeObject
  /** The object the server answered with, when the write succeeded and returned one. */
  readonly result?: KubeObject
  /** Why the write failed; absent when it succeeded. */
  readonly error?: unknown
}

function namespaceFor(
  ref: ResourceRef,
  options: ObjectCallOptions | undefined,
  object?: KubeObject
): string | undefined {
  if (!ref.namespaced) return undefined
  const namespace = options?.namespace ?? object?.metadata.namespace
  return namespace === '' ? undefined : namespace
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Records the writes made through it, passing every call on to `inner`. */
export class WriteRecorder implements ObjectClient {
  readonly #inner: ObjectClient
  readonly #writes: RecordedWrite[] = []

  constructor(inner: ObjectClient) {
    this.#inner = inner
  }

  /** Every write recorded so far, in the order the calls were made. */
  get writes(): readonly RecordedWrite[] {
    return [...this.#writes]
  }

  /** A position in the record: pass it to {@link WriteRecorder.since}. */
  mark(): number {
    return this.#writes.length
  }

  /** The writes recorded after a {@link WriteRecorder.mark}. */
  since(mark: number): readonly RecordedWrite[] {
    return this.#writes.slice(mark)
  }

  /** Forgets the recorded writes, e.g. before the next sync. */
  clear(): void {
    this.#writes.length = 0
  }

  get(ref: ResourceRef, name: string, options?: ObjectCallOptions): Promise<KubeObject> {
    return this.#inner.get(ref, name, options)
  }

  create(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject> {
    const write = this.#write('create', ref, namespaceFor(ref, options, object), object)
    return write(this.#inner.create(ref, object, options))
  }

  update(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject> {
    const write = this.#write('update', ref, namespaceFor(ref, options, object), object)
    return write(this.#inner.update(ref, object, options))
  }

  updateStatus(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject> {
    const write = this.#write('updateStatus', ref, namespaceFor(ref, options, object), object)
    return write(this.#inner.updateStatus(ref, object, options))
  }

  delete(ref: ResourceRef, name: string, options?: DeleteOptions): Promise<unknown> {
    const record = this.#record({
      method: 'delete',
      ref,
      namespace: namespaceFor(ref, options),
      name,
    })
    return this.#inner.delete(ref, name, options).catch((error: unknown) => {
      record.error = error
      throw error
    })
  }

  /** Takes the write's place in call order; it is completed when the call settles. */
  #record(write: RecordedWrite): Mutable<RecordedWrite> {
    const record: Mutable<RecordedWrite> = { ...write }
    this.#writes.push(record)
    return record
  }

  #write(
    method: WriteMethod,
    ref: ResourceRef,
    namespace: string | undefined,
    object: KubeObject
  ): (call: Promise<KubeObject>) => Promise<KubeObject> {
    const name = object.metadata.name ?? ''
    const record = this.#record({ method, ref, namespace, name, sent: structuredClone(object) })
    return (call) =>
      call.then(
        (result) => {
          record.result = result
          return result
        },
        (error: unknown) => {
          record.error = error
          throw error
        }
      )
  }
}

/** `resource namespace/name` (`configmaps default/web`), the key a summary names a write by. */
export function writeKey(write: Pick<RecordedWrite, 'ref' | 'namespace' | 'name'>): string {
  const group = write.ref.group === '' ? '' : `.${write.ref.group}`
  return `${write.ref.resource}${group} ${keyOf(write.namespace, write.name)}`
}

/** What one sync wrote, from its recorded writes; each entry is a {@link writeKey}. */
export interface WriteSummary {
  readonly created: readonly string[]
  readonly updated: readonly string[]
  readonly deleted: readonly string[]
  /** Objects the sync wrote nothing to, of those it was told about (`observed`). */
  readonly unchanged: readonly string[]
  /** Writes that failed, with their error message. */
  readonly failed: readonly { readonly key: string; readonly error: string }[]
  /** The parent's own metadata was written (its finalizer, a decorator's labels). */
  readonly parentUpdated: boolean
  /** The parent's status was written. */
  readonly statusWritten: boolean
}

/**
 * Sums up a sync's writes: the children (or attachments) it created, updated and deleted, the
 * ones it left alone, and what it wrote to the parent itself.
 *
 * @param writes - the writes of one sync, from {@link WriteRecorder.since}
 * @param parent - the parent's resource and key, to tell its writes from its children's
 * @param observed - the {@link writeKey}s of the children the sync observed; those it did not
 *   write are `unchanged`
 */
export function summarizeWrites(
  writes: readonly RecordedWrite[],
  parent: {
    readonly ref: ResourceRef
    readonly namespace: string | undefined
    readonly name: string
  },
  observed: Iterable<string> = []
): WriteSummary {
  const parentKey = writeKey(parent)
  const created: string[] = []
  const updated: string[] = []
  const deleted: string[] = []
  const failed: { key: string; error: string }[] = []
  let parentUpdated = false
  let statusWritten = false
  for (const write of writes) {
    const key = writeKey(write)
    if (write.error !== undefined) {
      const error = messageOf(write.error)
      failed.push({ key, error })
      continue
    }
    if (key === parentKey) {
      if (write.method === 'updateStatus') statusWritten = true
      else if (write.method === 'update') parentUpdated = true
      continue
    }
    const list = { create: created, update: updated, updateStatus: updated, delete: deleted }
    list[write.method].push(key)
  }
  const touched = new Set([...created, ...updated, ...deleted, ...failed.map((f) => f.key)])
  const unchanged = [...observed].filter((key) => !touched.has(key))
  return { created, updated, deleted, unchanged, failed, parentUpdated, statusWritten }
}
