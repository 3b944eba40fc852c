/**
 * `metactl ring [KIND/NAME]`: the replicas of a sharded engine (`metactl run --sharding`), and
 * which one serves a given parent.
 *
 * @module
 */
import { Command, Option } from 'commander'
import { NotFoundError } from '../../kube/api-error.js'
import { LEASE_RESOURCE } from '../../runtime/leader/leader-election.js'
import { RING_LABEL } from '../../runtime/ring/member-lease.js'
import type { ShardField } from '../../runtime/ring/shard-selector.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { clusterOptions, connectCluster } from '../cluster-connection.js'
import type { ClusterFlags } from '../cluster-connection.js'
import { resolveKind } from '../tree/resolve-kind.js'
import { formatRingReport, ownerLine, ringReport } from './ring-report.js'

interface RingOptions extends ClusterFlags {
  readonly shardingNamespace: string
  readonly shardingRing: string
  readonly shardKey: ShardField
  readonly namespace: string
}

async function ring(io: CliIo, target: string | undefined, opts: RingOptions): Promise<void> {
  const connection = await connectCluster(opts)
  try {
    const leases = await connection.client.list(LEASE_RESOURCE, {
      namespace: opts.shardingNamespace,
      labelSelector: `${RING_LABEL}=${opts.shardingRing}`,
    })
    const report = ringReport(leases.items, Date.now())
    if (report.members.length === 0)
      throw new CliError(
        `no member of ring ${opts.shardingRing} in namespace ${opts.shardingNamespace}: ` +
          'is the engine running with --sharding there?'
      )
    for (const line of formatRingReport(opts.shardingRing, opts.shardingNamespace, report))
      io.out(line)
    if (target === undefined) return
    const slash = target.indexOf('/')
    if (slash <= 0)
      throw new CliError(`expected KIND/NAME, such as podservice/nginx, got "${target}"`)
    const info = resolveKind(await connection.discovery.refresh(), target.slice(0, slash))
    const name = target.slice(slash + 1)
    try {
      const object = await connection.client.get(info.ref, name, {
        ...(info.ref.namespaced ? { namespace: opts.namespace } : {}),
      })
      io.out(ownerLine({ ...object, kind: info.kind }, opts.shardKey, report.ring))
    } catch (error) {
      if (error instanceof NotFoundError) throw new CliError(`${info.kind} ${name} not found`)
      throw error
    }
  } finally {
    await connection.close()
  }
}

/** Builds `metactl ring`. */
export function ringCommand(io: CliIo): Command {
  const command = new Command('ring')
    .description(
      'show the replicas of a sharded engine (metactl run --sharding) and which one serves a parent'
    )
    .argument('[KIND/NAME]', 'a parent, e.g. podservice/nginx: print the replica that owns it')
    .option('--sharding-namespace <ns>', 'namespace of the ring Leases', 'metacontroller')
    .option('--sharding-ring <name>', 'name of the ring', 'metacontroller')
    .addOption(
      new Option('--shard-key <field>', 'what the engine hashes parents by')
        .choices(['uid', 'namespace'])
        .default('uid')
    )
    .option('-n, --namespace <namespace>', 'namespace of a namespaced parent', 'default')
  for (const option of clusterOptions()) command.addOption(option)
  return command.action(async (target: string | undefined, opts: RingOptions) => {
    await ring(io, target, opts)
  })
}
