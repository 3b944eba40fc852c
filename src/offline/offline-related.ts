/**
 * The customize hook offline (`metactl render --related`): the engine's own
 * `RelatedObjectsManager` over the in-memory cluster, its informers reading the related objects
 * seeded from files, and discovery answered without a server (kinds from the objects given, the
 * CRDs or the built-in kinds; scopes by `kindScope`).
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { HookVersion } from '../api/hook-model.js'
import { kindOf, pluralOf, isResourceOf } from '../api/resource-names.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { ResourceInfo } from '../kube/resource-map.js'
import { silentLogger } from '../runtime/diagnostics/logger.js'
import type { ListWatchScope } from '../runtime/informers/list-watcher.js'
import { SharedInformers } from '../runtime/informers/shared-informers.js'
import { NotSyncedError } from '../runtime/queue/reconcile-errors.js'
import { RelatedObjectsManager } from '../engine/customize/related-objects-manager.js'
import type { RelatedObjectsManagerOptions } from '../engine/customize/related-objects-manager.js'
import type { FakeCluster } from '../in-memory/fake-cluster.js'
import { kindScope } from '../sdk/resource-scope.js'
import type { OfflineCustomize } from './offline-hooks.js'
import { offlineResource } from './offline-resource.js'

/**
 * What discovery would say of a related rule's resource: the kind of a related object of that
 * resource, else a CRD's or a built-in kind (else a guess); namespaced as its CRD or the built-in
 * table says, else as the objects given are.
 */
export function relatedResource(
  apiVersion: string,
  resource: string,
  objects: readonly KubeObject[],
  crds: readonly KubeObject[]
): ResourceInfo {
  const sample = objects.find((o) => o.apiVersion === apiVersion && isResourceOf(o.kind, resource))
  const kind = sample?.kind ?? kindOf(apiVersion, resource).kind
  const info = offlineResource(apiVersion, resource, kind)
  const scope = kindScope(apiVersion, kind, crds, resource)
  const namespaced = scope.namespaced ?? (sample?.metadata.namespace ?? '') !== ''
  return { ...info, ref: { ...info.ref, namespaced } }
}

/** A manager whose first sync waits for the informers it starts, as the engine's next sync would. */
class OfflineRelatedObjects extends RelatedObjectsManager {
  readonly #pending: Promise<void>[]

  constructor(options: RelatedObjectsManagerOptions, pending: Promise<void>[]) {
    super(options)
    this.#pending = pending
  }

  override async relatedObjects(
    ...args: Parameters<RelatedObjectsManager['relatedObjects']>
  ): ReturnType<RelatedObjectsManager['relatedObjects']> {
    // Each pass starts the informers of the rules it reaches; the customize answer is cached.
    for (let pass = 0; ; pass++) {
      try {
        return await super.relatedObjects(...args)
      } catch (error) {
        if (!(error instanceof NotSyncedError) || pass > 8) throw error
        await Promise.all(this.#pending)
      }
    }
  }
}

/** What {@link offlineRelated} needs. */
export interface OfflineRelatedOptions {
  readonly controller: KubeObject
  readonly customize: OfflineCustomize | undefined
  readonly customizeVersion: HookVersion
  readonly parentNamespaced: boolean
  readonly cluster: FakeCluster
  /** The `--related` objects, already seeded into the cluster. */
  readonly related: readonly KubeObject[]
  readonly crds: readonly KubeObject[]
}

/** The related objects of an offline sync, and what stops its informers. */
export interface OfflineRelated {
  readonly manager: RelatedObjectsManager | undefined
  stop(): Promise<void>
}

/** The engine's related-objects manager over the in-memory cluster; none without customize. */
export function offlineRelated(options: OfflineRelatedOptions): OfflineRelated {
  const { customize, cluster, related, crds } = options
  if (customize === undefined) return { manager: undefined, stop: () => Promise.resolve() }
  const shared = new SharedInformers(cluster.listWatcherFactory())
  const pending: Promise<void>[] = []
  const manager = new OfflineRelatedObjects(
    {
      controller: options.controller,
      customize,
      customizeVersion: options.customizeVersion,
      parentNamespaced: options.parentNamespaced,
      informers: {
        acquire: <T extends KubeObject = KubeObject>(ref: ResourceRef, scope?: ListWatchScope) => {
          const lease = shared.acquire<T>(ref, scope)
          pending.push(lease.informer.waitForSync())
          return lease
        },
      },
      discovery: {
        resolveResource: (apiVersion, resource) =>
          Promise.resolve(relatedResource(apiVersion, resource, related, crds)),
      },
      log: silentLogger,
    },
    pending
  )
  return {
    manager,
    stop: async () => {
      await manager.stop()
      await shared.stopAll()
    },
  }
}

/** The resource each `--related` object is seeded under. */
export function relatedSeeds(
  related: readonly KubeObject[],
  crds: readonly KubeObject[]
): [ResourceInfo['ref'], KubeObject[]][] {
  return related.map((object) => [
    relatedResource(object.apiVersion, pluralOf(object.kind), related, crds).ref,
    [object],
  ])
}
