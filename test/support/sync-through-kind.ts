// Runs one sync of a controller kind as the parent loop does: through `kind.sync`, over informer
// caches listed from an in-memory cluster just before the sync, so a unit test enters the
// pipeline where production enters it.
import type { FakeCluster } from '../../src/in-memory/fake-cluster.js'
import type { ControllerKind } from '../../src/engine/loop/parent-controller.js'
import type { Action } from '../../src/runtime/queue/controller-loop.js'
import { SharedInformers } from '../../src/runtime/informers/shared-informers.js'

/** Syncs `key` with `kind` over caches synced from `cluster`, then stops those informers. */
export async function syncThroughKind(
  kind: ControllerKind,
  cluster: FakeCluster,
  key: string
): Promise<Action> {
  const informers = new SharedInformers(cluster.listWatcherFactory())
  try {
    const lease = (source: ControllerKind['parentSources'][number]) =>
      informers.acquire(source.ref, source.scope ?? {}).informer
    const caches = {
      parents: kind.parentSources.map(lease),
      children: kind.childSources.map(lease),
    }
    const signal = AbortSignal.timeout(5000)
    await Promise.all([...caches.parents, ...caches.children].map((i) => i.waitForSync(signal)))
    return await kind.sync(key, { signal }, caches)
  } finally {
    await informers.stopAll()
  }
}
