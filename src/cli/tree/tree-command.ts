/**
 * `metactl tree KIND/NAME`: an object and everything it owns, recursively, with readiness and
 * age, like `kubectl tree`.
 *
 * @module
 */
import { Command } from 'commander'
import type { KubeObject } from '../../core/kube-object.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { clusterOptions, connectCluster } from '../cluster-connection.js'
import type { ClusterConnection, ClusterFlags } from '../cluster-connection.js'
import { buildOwnerTree, formatOwnerTree } from './owner-tree.js'
import { preferredResources, resolveKind } from './resolve-kind.js'
import { messageOf } from '../../core/message-of.js'

interface TreeOptions extends ClusterFlags {
  readonly namespace: string
}

/** Types never worth listing for owners: events name objects but are not owned by them. */
const SKIPPED = new Set(['events', 'events.events.k8s.io'])

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>
): Promise<R[]> {
  const results: R[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/**
 * Lists the objects that could be owned by `root`: in its namespace when it is namespaced (the
 * garbage collector refuses cross-namespace owners), everywhere when it is cluster-scoped.
 */
async function candidates(
  connection: ClusterConnection,
  root: KubeObject,
  warn: (line: string) => void
): Promise<KubeObject[]> {
  const map = connection.discovery.current()
  const namespace = root.metadata.namespace
  const types = preferredResources(map).filter(
    (info) =>
      !SKIPPED.has(
        info.ref.group === '' ? info.ref.resource : `${info.ref.resource}.${info.ref.group}`
      ) &&
      (namespace === undefined || info.ref.namespaced)
  )
  const lists = await mapLimit(types, 8, async (info: ResourceInfo) => {
    try {
      const list = await connection.client.list(
        info.ref,
        namespace === undefined ? {} : { namespace }
      )
      return list.items.map((item) => ({ ...item, apiVersion: info.apiVersion, kind: info.kind }))
    } catch (error) {
      warn(`warning: cannot list ${info.ref.resource}: ${messageOf(error)}`)
      return []
    }
  })
  return lists.flat()
}

async function tree(io: CliIo, target: string, opts: TreeOptions): Promise<void> {
  const slash = target.indexOf('/')
  if (slash <= 0 || slash === target.length - 1) {
    throw new CliError(
      `expected KIND/NAME, such as podservice/nginx or deployment.apps/web, got "${target}"`
    )
  }
  const connection = await connectCluster(opts)
  try {
    const info = resolveKind(await connection.discovery.refresh(), target.slice(0, slash))
    const name = target.slice(slash + 1)
    const namespace = info.ref.namespaced ? opts.namespace : undefined
    let root: KubeObject
    try {
      root = await connection.client.get(
        info.ref,
        name,
        namespace === undefined ? {} : { namespace }
      )
    } catch (error) {
      if (error instanceof NotFoundError) {
        const where = namespace === undefined ? '' : ` in namespace ${namespace}`
        throw new CliError(`${info.kind} ${name} not found${where}`)
      }
      throw error
    }
    root = { ...root, apiVersion: info.apiVersion, kind: info.kind }
    const objects = await candidates(connection, root, (line) => {
      io.err(line)
    })
    for (const line of formatOwnerTree(buildOwnerTree(root, objects), Date.now())) io.out(line)
  } finally {
    await connection.close()
  }
}

/** Builds `metactl tree`. */
export function treeCommand(io: CliIo): Command {
  const command = new Command('tree')
    .description('show an object and what it owns (children, grandchildren) with readiness and age')
    .argument('<KIND/NAME>', 'the object, e.g. podservice/nginx, deployment.apps/web')
    .option('-n, --namespace <namespace>', 'namespace of a namespaced object', 'default')
  for (const option of clusterOptions()) command.addOption(option)
  return command
    .addHelpText(
      'after',
      [
        '',
        'Children are the objects whose metadata.ownerReferences name the object (the engine sets',
        'one on every child it creates), found by listing every listable type in its namespace.',
        '',
        'Example:',
        '  metactl tree podservice/nginx -n pocs-kubernetes-metacontroller',
      ].join('\n')
    )
    .action(async (target: string, opts: TreeOptions) => {
      await tree(io, target, opts)
    })
}
