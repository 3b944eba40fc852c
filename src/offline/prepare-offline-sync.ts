/**
 * What an offline sync of either controller kind sets up before the engine's pipeline runs: the
 * hooks (guessed kinds corrected from each answer), the in-memory cluster seeded with the parent
 * (deleting when finalizing), the observed and related objects, and the customize hook's related
 * objects. Each kind (`sync-composite-offline.ts`, `sync-decorator-offline.ts`) adds only its
 * strategy, as the engine's kinds do.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
import type { ControllerHooks } from '../api/controller-spec-fields.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { FakeCluster } from '../in-memory/fake-cluster.js'
import type { OfflineHookKind, OfflineHookOptions, OfflineHooks } from './offline-hooks.js'
import { offlineHooks } from './offline-hooks.js'
import { offlineRelated, relatedSeeds } from './offline-related.js'
import type { OfflineRelated } from './offline-related.js'
import { correctGuesses, describeObject, resourceOf, typeOf } from './offline-resource.js'
import type { OfflineInputs, ResolvedRule } from './offline-resource.js'
import { asDeleting, seedCluster } from './seed-cluster.js'
import { runOfflineSync } from './run-offline-sync.js'
import type { OfflineSync, OfflineSyncRun } from './run-offline-sync.js'
import type { SyncAnswer, SyncResponse } from '../engine/sync/run-sync.js'

/** What one kind gives {@link prepareOfflineSync}. */
export interface OfflineKindSetup<Request, Response> {
  readonly controller: { readonly object: KubeObject; readonly spec: { hooks: ControllerHooks } }
  readonly webhooks: OfflineHookKind<Request, Response>['webhooks']
  /** The objects of an answer (children or attachments), whose kinds correct guessed ones. */
  desiredOf(response: Response): readonly KubeObject[]
  readonly parentRef: ResourceRef
  readonly finalizer: string
  /** Objects seeded besides the rules' and the related ones (ControllerRevisions). */
  readonly extraSeeds?: readonly (readonly [ResourceRef, readonly KubeObject[]])[]
}

/** What the pipeline then runs over. */
export interface OfflineSetup<Request, Response> {
  readonly hooks: OfflineHooks<Request, Response>
  readonly cluster: FakeCluster
  /** The parent as seeded: marked deleting, holding the finalizer, when finalizing. */
  readonly seeded: KubeObject
  readonly related: OfflineRelated
}

/** Warns about what an offline render cannot do as the engine would. */
function warnOffline(
  hooks: ControllerHooks,
  found: OfflineHooks<unknown, unknown>,
  inputs: OfflineInputs,
  finalizing: boolean,
  warn: (line: string) => void
): void {
  if (finalizing && hooks.finalize === undefined) {
    warn('warning: the controller has no finalize hook; the engine never sends finalizing: true')
  }
  if (hooks.customize !== undefined && found.customize === undefined) {
    warn(
      'warning: the customize hook is not called with --hook-url; related objects are empty ' +
        '(a --hook-module export with a customize hook is called over the --related objects)'
    )
  }
  if (inputs.related.length > 0 && found.customize === undefined) {
    warn('warning: --related is not used: there is no customize hook to select from it')
  }
}

/** Sets up an offline sync of either kind (see the module's description). */
export async function prepareOfflineSync<Request, Response>(
  inputs: OfflineInputs,
  opts: OfflineHookOptions,
  kind: OfflineKindSetup<Request, Response>,
  warn: (line: string) => void
): Promise<OfflineSetup<Request, Response>> {
  const { object, spec } = kind.controller
  const { parent, crds, rules, byRule, related } = inputs
  const finalizing = opts.finalizing === true
  const hooks = await offlineHooks(
    opts,
    spec.hooks,
    {
      controller: object,
      webhooks: kind.webhooks,
      answered: (response) => {
        correctGuesses(rules, kind.desiredOf(response), warn)
      },
    },
    warn
  )
  warnOffline(spec.hooks, hooks as OfflineHooks<unknown, unknown>, inputs, finalizing, warn)
  const seeded = finalizing ? asDeleting(parent, kind.finalizer) : parent
  const cluster = seedCluster(kind.parentRef, seeded, [
    ...relatedSeeds(related, crds),
    ...[...byRule].map(([rule, list]) => [resourceOf(rule).ref, list] as const),
    ...(kind.extraSeeds ?? []),
  ])
  const relatedObjects = offlineRelated({
    controller: { ...object, status: object['status'] ?? {} },
    customize: hooks.customize,
    customizeVersion: spec.hooks.customize?.version ?? 'v1',
    parentNamespaced: kind.parentRef.namespaced,
    cluster,
    related,
    crds,
  })
  return { hooks, cluster, seeded, related: relatedObjects }
}

/** Warns about each observed object the engine did not observe, with `why`. */
export function warnLeftOut(
  byRule: ReadonlyMap<ResolvedRule, readonly KubeObject[]>,
  observed: (type: string) => ReadonlyMap<string, unknown> | undefined,
  why: (object: KubeObject) => string,
  warn: (line: string) => void
): void {
  for (const [rule, list] of byRule) {
    for (const object of list) {
      if (observed(typeOf(rule))?.has(objectKey(object)) === true) continue
      warn(`warning: observed ${describeObject(object)} is left out: ${why(object)}`)
    }
  }
}

/**
 * Runs a kind's pipeline over what {@link prepareOfflineSync} set up (its cluster, seeded parent
 * and hooks), then stops the related objects' informers whatever happened.
 */
export async function runPreparedSync<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  setup: OfflineSetup<Request, Response>,
  kind: Omit<OfflineSync<Observed, Request, Response, Answer>, 'cluster' | 'parent' | 'hooks'>
): Promise<OfflineSyncRun<Observed, Answer>> {
  try {
    return await runOfflineSync({
      ...kind,
      cluster: setup.cluster,
      parent: setup.seeded,
      hooks: setup.hooks,
    })
  } finally {
    await setup.related.stop()
  }
}
