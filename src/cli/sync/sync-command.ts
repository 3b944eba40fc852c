/**
 * `metactl sync KIND/NAME [--wait]` and `metactl sync --controller NAME`: asks the running
 * engine to sync objects now, through the sync-request annotation (see `core/sync-request`), so
 * it needs only RBAC to patch the object and works whichever replica serves it.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { Command, Option } from 'commander'
import { parseGoDuration } from '../../core/go-duration.js'
import { keyOf, namespaceOf } from '../../core/object-key.js'
import { SYNC_REQUEST_ANNOTATION, syncResultOf } from '../../core/sync-request.js'
import type { SyncResult } from '../../core/sync-request.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { KubeObject } from '../../core/kube-object.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { clusterOptions, connectCluster } from '../cluster-connection.js'
import type { ClusterConnection, ClusterFlags } from '../cluster-connection.js'
import { resolveKind } from '../tree/resolve-kind.js'
import { controllerParents } from './controller-parents.js'
import type { ServedObject } from './controller-parents.js'

interface SyncOptions extends ClusterFlags {
  readonly namespace?: string
  readonly controller?: string
  readonly wait?: boolean
  readonly timeout: string
}

/** How often `--wait` reads the objects back. */
const POLL_INTERVAL_MS = 250

function label(served: ServedObject): string {
  const { object, info } = served
  const name = keyOf(namespaceOf(object), object.metadata.name ?? '')
  return `${info.ref.group === '' ? info.ref.resource : `${info.ref.resource}.${info.ref.group}`}/${name}`
}

async function oneObject(
  connection: ClusterConnection,
  target: string,
  namespace: string
): Promise<ServedObject> {
  const slash = target.indexOf('/')
  if (slash <= 0 || slash === target.length - 1) {
    throw new CliError(
      `expected KIND/NAME, such as podservice/nginx or deployment.apps/web, got "${target}"`
    )
  }
  const info = resolveKind(await connection.discovery.refresh(), target.slice(0, slash))
  const name = target.slice(slash + 1)
  const options = info.ref.namespaced ? { namespace } : {}
  try {
    const object = await connection.client.get(info.ref, name, options)
    return { info, object: { ...object, apiVersion: info.apiVersion, kind: info.kind } }
  } catch (error) {
    if (error instanceof NotFoundError) {
      const where = info.ref.namespaced ? ` in namespace ${namespace}` : ''
      throw new CliError(`${info.kind} ${name} not found${where}`)
    }
    throw error
  }
}

async function request(
  connection: ClusterConnection,
  served: ServedObject,
  nonce: string
): Promise<void> {
  const namespace = namespaceOf(served.object)
  await connection.client.patch(
    served.info.ref,
    served.object.metadata.name ?? '',
    { metadata: { annotations: { [SYNC_REQUEST_ANNOTATION]: nonce } } },
    { type: 'merge', ...(namespace === undefined ? {} : { namespace }) }
  )
}

async function answerOf(
  connection: ClusterConnection,
  served: ServedObject,
  nonce: string
): Promise<SyncResult | 'gone' | undefined> {
  const namespace = namespaceOf(served.object)
  let object: KubeObject
  try {
    object = await connection.client.get(
      served.info.ref,
      served.object.metadata.name ?? '',
      namespace === undefined ? {} : { namespace }
    )
  } catch (error) {
    if (error instanceof NotFoundError) return 'gone'
    throw error
  }
  const result = syncResultOf(object)
  return result?.nonce === nonce ? result : undefined
}

/** Waits for every answer; prints one line per object; returns how many did not succeed. */
async function waitForAnswers(
  io: CliIo,
  connection: ClusterConnection,
  objects: readonly ServedObject[],
  nonce: string,
  timeoutMs: number
): Promise<number> {
  const deadline = Date.now() + timeoutMs
  const pending = new Set(objects)
  let failed = 0
  for (;;) {
    for (const served of [...pending]) {
      const answer = await answerOf(connection, served, nonce)
      if (answer === undefined) continue
      pending.delete(served)
      if (answer === 'gone') {
        failed++
        io.err(`${label(served)}: deleted before it was synced`)
      } else if (answer.ok) {
        io.out(`${label(served)}: synced`)
      } else {
        failed++
        io.err(`${label(served)}: sync failed: ${answer.reason ?? ''}`)
      }
    }
    if (pending.size === 0) return failed
    if (Date.now() >= deadline) break
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
  }
  for (const served of pending) {
    io.err(
      `${label(served)}: no answer within ${timeoutMs / 1000} s: is \`metactl run\` running, ` +
        'with a controller whose selectors match it?'
    )
  }
  return failed + pending.size
}

async function sync(
  io: CliIo,
  setExitCode: (code: number) => void,
  target: string | undefined,
  opts: SyncOptions
): Promise<void> {
  if ((target === undefined) === (opts.controller === undefined)) {
    throw new CliError('name one object (KIND/NAME) or one controller (--controller NAME)')
  }
  const timeoutMs = parseGoDuration(opts.timeout)
  if (timeoutMs === undefined || timeoutMs <= 0) {
    throw new CliError(`--timeout: "${opts.timeout}" is not a positive duration such as 30s or 2m`)
  }
  const connection = await connectCluster(opts)
  try {
    const objects =
      target === undefined
        ? await controllerParents(
            connection.client,
            await connection.discovery.refresh(),
            opts.controller ?? ''
          )
        : [await oneObject(connection, target, opts.namespace ?? connection.config.namespace)]
    if (objects.length === 0) {
      io.out(`controller ${opts.controller ?? ''} serves no object right now; nothing to sync`)
      return
    }
    const nonce = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
    for (const served of objects) await request(connection, served, nonce)
    if (opts.wait !== true) {
      for (const served of objects) io.out(`${label(served)}: sync requested (${nonce})`)
      return
    }
    const failed = await waitForAnswers(io, connection, objects, nonce, timeoutMs)
    if (failed > 0) setExitCode(1)
  } finally {
    await connection.close()
  }
}

/** Builds `metactl sync`. */
export function syncCommand(io: CliIo, setExitCode: (code: number) => void): Command {
  const command = new Command('sync')
    .description("ask the running engine to sync an object (or all of a controller's) now")
    .argument('[KIND/NAME]', 'the parent or decorated object, e.g. podservice/nginx')
    .option(
      '-n, --namespace <namespace>',
      "namespace of a namespaced object (default: the context's)"
    )
    .option(
      '--controller <name>',
      'every object a CompositeController or DecoratorController serves (compositecontroller/NAME or decoratorcontroller/NAME when both exist)'
    )
    .option(
      '--wait',
      "wait for the engine's answer and print it; exit 1 on a failed sync or no answer"
    )
    .addOption(new Option('--timeout <duration>', 'how long --wait waits').default('60s'))
  for (const option of clusterOptions()) command.addOption(option)
  return command
    .addHelpText(
      'after',
      [
        '',
        `The request is the annotation ${SYNC_REQUEST_ANNOTATION}: <id> on the object. The`,
        'replica that serves the object (the leader, or the shard owner) syncs it at once and',
        'answers in metacontroller-ts.dev/sync-result: "<id> ok" or "<id> error: <reason>".',
        'You need RBAC to get and patch the object; no port of the engine is used.',
        '',
        'Examples:',
        '  metactl sync podservice/nginx -n demo --wait',
        '  metactl sync --controller podservice-controller --wait --timeout 2m',
      ].join('\n')
    )
    .action(async (target: string | undefined, opts: SyncOptions) => {
      await sync(io, setExitCode, target, opts)
    })
}
