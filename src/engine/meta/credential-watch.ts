/**
 * Watches the Secrets and ConfigMaps that webhook TLS and auth settings name, so a hosted
 * controller is rebuilt when one of them changes (upstream reads them once and needs a restart).
 *
 * @remarks
 * An informer per kind is started on the first read and kept until {@link CredentialWatch.stop}:
 * engines with no such settings never list Secrets. Like upstream's cached client, it needs RBAC
 * to list and watch Secrets and ConfigMaps cluster-wide once a controller uses them.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { CONFIGMAPS, SECRETS } from '../../kube/well-known-resources.js'
import type { InformerLease, SharedInformers } from '../../runtime/informers/shared-informers.js'
import type { CredentialKind, CredentialReader } from '../hooks/webhook-credentials.js'
import { WebhookCredentialError } from '../hooks/webhook-credentials.js'

/** How long the first list of Secrets or ConfigMaps may take (1 min). */
const SYNC_TIMEOUT_MS = 60_000

/** `Kind/namespace/name` of a referenced object. */
export type CredentialRef = string

function refOf(kind: CredentialKind, namespace: string, name: string): CredentialRef {
  return `${kind}/${namespace}/${name}`
}

/** Reads referenced Secrets and ConfigMaps from caches and reports their changes. */
export class CredentialWatch {
  readonly #informers: SharedInformers
  readonly #onChange: (ref: CredentialRef) => void
  readonly #leases = new Map<CredentialKind, { lease: InformerLease; unsubscribe: () => void }>()

  /** @param onChange - Called with the ref of every added, changed or deleted object. */
  constructor(informers: SharedInformers, onChange: (ref: CredentialRef) => void) {
    this.#informers = informers
    this.#onChange = onChange
  }

  /** A reader that adds every object it reads (found or not) to `refs`. */
  reader(refs: Set<CredentialRef>): CredentialReader {
    return {
      read: async (kind, namespace, name) => {
        refs.add(refOf(kind, namespace, name))
        const lease = await this.#lease(kind)
        return lease.informer.store.get(`${namespace}/${name}`)
      },
    }
  }

  /**
   * The resourceVersions of `refs` as one string: a different answer means one of them changed
   * since it was taken.
   */
  fingerprint(refs: Iterable<CredentialRef>): string {
    return [...refs]
      .sort()
      .map((ref) => {
        const [kind, namespace, name] = ref.split('/') as [CredentialKind, string, string]
        const object = this.#leases.get(kind)?.lease.informer.store.get(`${namespace}/${name}`)
        return `${ref}@${object?.metadata.resourceVersion ?? 'absent'}`
      })
      .join(',')
  }

  async #lease(kind: CredentialKind): Promise<InformerLease> {
    let held = this.#leases.get(kind)
    if (held === undefined) {
      const lease = this.#informers.acquire(kind === 'Secret' ? SECRETS : CONFIGMAPS)
      const changed = (object: KubeObject): void => {
        this.#onChange(refOf(kind, object.metadata.namespace ?? '', object.metadata.name ?? ''))
      }
      const unsubscribe = lease.informer.subscribe({
        onAdd: changed,
        onUpdate: (_old, object) => {
          changed(object)
        },
        onDelete: changed,
      })
      held = { lease, unsubscribe }
      this.#leases.set(kind, held)
    }
    try {
      await held.lease.informer.waitForSync(AbortSignal.timeout(SYNC_TIMEOUT_MS))
    } catch (error) {
      throw new WebhookCredentialError(
        `cannot list ${kind}s within ${SYNC_TIMEOUT_MS / 1000} s; webhook TLS and auth settings ` +
          `need the engine to be allowed to list and watch ${kind}s`,
        { cause: error }
      )
    }
    return held.lease
  }

  /** Releases the informers. */
  async stop(): Promise<void> {
    const held = [...this.#leases.values()]
    this.#leases.clear()
    for (const { unsubscribe } of held) unsubscribe()
    await Promise.all(held.map(({ lease }) => lease.release()))
  }
}
