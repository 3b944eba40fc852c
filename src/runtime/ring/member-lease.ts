/**
 * How a ring member is written down: a Lease of its own, named after the ring and its identity,
 * labelled with the ring, annotated with the member and the ring it announced.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError } from '../../kube/api-error.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import { LEASE_RESOURCE } from '../leader/leader-election.js'
import { isJsonObject } from '../../core/kube-object.js'
import { shardHash } from './fnv1a64.js'
import type { MemberRecord } from './member-table.js'

/** The label naming the ring a member Lease belongs to. */
export const RING_LABEL = 'metacontroller.io/ring'

/** The annotation naming the member a Lease belongs to (also once released). */
export const RING_MEMBER_ANNOTATION = 'metacontroller.io/ring-member'

/** The annotation holding the id of the ring a member announced. */
export const RING_VIEW_ANNOTATION = 'metacontroller.io/ring-view'

/** The calls membership makes: a {@link DynamicClient} or a test double. */
export type RingClient = Pick<DynamicClient, 'get' | 'create' | 'update' | 'delete' | 'list'>

/** The name of a member's Lease: the ring and a hash of the identity (any identity fits). */
export function memberLeaseName(ring: string, identity: string): string {
  return `${ring}-${shardHash(identity)}`
}

/** Reads a member Lease; undefined when it names no member. */
export function memberRecord(lease: KubeObject): MemberRecord | undefined {
  const spec = isJsonObject(lease['spec']) ? lease['spec'] : {}
  const holder = typeof spec['holderIdentity'] === 'string' ? spec['holderIdentity'] : ''
  const identity = lease.metadata.annotations?.[RING_MEMBER_ANNOTATION] ?? holder
  if (identity === '') return undefined
  return {
    identity,
    view: lease.metadata.annotations?.[RING_VIEW_ANNOTATION] ?? '',
    resourceVersion: lease.metadata.resourceVersion ?? '',
    released: holder === '',
  }
}

/** The member records of `leases`, skipping Leases that name no member. */
export function memberRecords(leases: readonly KubeObject[]): MemberRecord[] {
  return leases.flatMap((lease) => {
    const record = memberRecord(lease)
    return record === undefined ? [] : [record]
  })
}

/** What a member writes into its Lease on each renewal. */
export interface MemberLeaseFields {
  readonly name: string
  readonly namespace: string
  readonly ring: string
  readonly identity: string
  /** The id of the ring the member announces. */
  readonly announced: string
  /** True when the member leaves: the holder is emptied so the others take its hashes. */
  readonly released: boolean
  readonly leaseDurationMs: number
  /** The renewal time, in the Lease's MicroTime format. */
  readonly renewTime: string
}

/** The Lease object of a member (without a resourceVersion). */
export function memberLease(fields: MemberLeaseFields): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: fields.name,
      namespace: fields.namespace,
      labels: { [RING_LABEL]: fields.ring },
      annotations: {
        [RING_MEMBER_ANNOTATION]: fields.identity,
        [RING_VIEW_ANNOTATION]: fields.announced,
      },
    },
    spec: {
      holderIdentity: fields.released ? '' : fields.identity,
      leaseDurationSeconds: Math.ceil(fields.leaseDurationMs / 1000),
      renewTime: fields.renewTime,
    },
  }
}

/**
 * Writes a member's own Lease: an update over `resourceVersion`, or a create when there is none
 * yet. Only the member writes its Lease (the others only delete it once it is long dead), so a
 * Lease that exists already, or changed since the member's last write, holds the member's own
 * write whose answer was lost (a timeout): it writes again over the version read now rather than
 * a retry period later, which a loaded member may not have before its renew deadline.
 */
export async function writeMemberLease(
  client: RingClient,
  lease: KubeObject,
  resourceVersion: string | undefined,
  signal: AbortSignal | undefined
): Promise<KubeObject> {
  const options = { ...(signal === undefined ? {} : { signal }) }
  const at = (version: string): KubeObject => ({
    ...lease,
    metadata: { ...lease.metadata, resourceVersion: version },
  })
  const overCurrent = async (): Promise<KubeObject> => {
    const { name = '', namespace = '' } = lease.metadata
    const current = await client.get(LEASE_RESOURCE, name, { namespace, ...options })
    return client.update(LEASE_RESOURCE, at(current.metadata.resourceVersion ?? ''), options)
  }
  if (resourceVersion !== undefined) {
    try {
      return await client.update(LEASE_RESOURCE, at(resourceVersion), options)
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error
      return overCurrent()
    }
  }
  try {
    return await client.create(LEASE_RESOURCE, lease, options)
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error
    return overCurrent()
  }
}
