/**
 * The object reads and writes a controller makes: the port the engine's sync steps depend on.
 *
 * @remarks
 * `DynamicClient` implements it against an API server; `FakeCluster` (`src/in-memory/`) in
 * memory, for the conformance suite and `metactl render`. Lists and watches are the informers' business, not this one's.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type {
  DeleteOptions,
  ObjectCallOptions,
  ResourceRef,
  WriteOptions,
} from './dynamic-client.js'

/** Reads and writes single objects of any resource. */
export interface ObjectClient {
  /** Reads one object; rejects with `NotFoundError` when there is none. */
  get(ref: ResourceRef, name: string, options?: ObjectCallOptions): Promise<KubeObject>
  /** Creates an object; rejects with `AlreadyExistsError` when its name is taken. */
  create(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject>
  /** Replaces an object; rejects with `ConflictError` when its resourceVersion is stale. */
  update(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject>
  /** Replaces an object's status subresource. */
  updateStatus(ref: ResourceRef, object: KubeObject, options?: WriteOptions): Promise<KubeObject>
  /** Deletes an object, honouring preconditions and the propagation policy. */
  delete(ref: ResourceRef, name: string, options?: DeleteOptions): Promise<unknown>
}
