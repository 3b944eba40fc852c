/**
 * `metactl version`: the package (CLI, engine and SDK ship together), Node.js, the Kubernetes
 * release the local control plane is built from, and the version of the server in the current
 * kubeconfig when it answers.
 *
 * @module
 */
import { Command, Option } from 'commander'
import { KUBERNETES_VERSION } from '../../cluster/control-plane-binaries.js'
import type { CliIo } from '../cli-io.js'
import { clusterOptions, connectCluster } from '../cluster-connection.js'
import type { ClusterFlags } from '../cluster-connection.js'
import { packageInfo } from '../package-info.js'
import { messageOf } from '../../core/message-of.js'

/** What `metactl version` reports. */
export interface VersionReport {
  readonly metactl: string
  readonly engine: string
  readonly hookProtocols: readonly string[]
  readonly node: string
  readonly nodeSupported: string
  readonly localControlPlane: string
  /** The server's version, or why it is unknown. */
  readonly server?: { readonly version: string; readonly url: string } | { readonly error: string }
}

interface VersionOptions extends ClusterFlags {
  readonly client?: boolean
  readonly output: 'text' | 'json'
}

async function serverVersion(flags: ClusterFlags): Promise<NonNullable<VersionReport['server']>> {
  let connection
  try {
    connection = await connectCluster(flags, { timeoutMs: 5000 })
  } catch (error) {
    return { error: messageOf(error) }
  }
  try {
    const body = await connection.transport.requestJson<{ gitVersion?: string }>({
      method: 'GET',
      path: '/version',
    })
    return { version: body.gitVersion ?? 'unknown', url: connection.config.server }
  } catch (error) {
    const reason = messageOf(error)
    return { error: `${connection.config.server} did not answer: ${reason}` }
  } finally {
    await connection.close()
  }
}

/** Collects the version report; `client` skips the server. */
export async function versionReport(options: VersionOptions): Promise<VersionReport> {
  const info = packageInfo()
  return {
    metactl: info.version,
    // The engine is this package's; it has no version of its own.
    engine: info.version,
    hookProtocols: ['v1', 'v2'],
    node: process.version,
    nodeSupported: info.nodeRange,
    localControlPlane: KUBERNETES_VERSION,
    ...(options.client === true ? {} : { server: await serverVersion(options) }),
  }
}

function formatText(report: VersionReport): string[] {
  const rows: [string, string][] = [
    ['metactl', report.metactl],
    [
      'engine',
      `${report.engine} (Metacontroller-compatible, hook protocols ${report.hookProtocols.join(', ')})`,
    ],
    ['node', `${report.node} (supported: ${report.nodeSupported})`],
    ['local control plane', `Kubernetes ${report.localControlPlane}`],
  ]
  const server = report.server
  if (server !== undefined) {
    rows.push([
      'server',
      'error' in server ? `unreachable: ${server.error}` : `${server.version} (${server.url})`,
    ])
  }
  return rows.map(([k, v]) => `${`${k}:`.padEnd(21)}${v}`)
}

/** Builds `metactl version`. */
export function versionCommand(io: CliIo): Command {
  const command = new Command('version')
    .description("print the versions of metactl, the engine, Node.js and the cluster's server")
    .option('--client', 'do not contact the server')
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text')
    )
  for (const option of clusterOptions()) command.addOption(option)
  return command
    .addHelpText(
      'after',
      '\nThe server is the one of --kubeconfig/--context, else $KUBECONFIG, else ~/.kube/config;\nan unreachable server is reported, not an error.'
    )
    .action(async (opts: VersionOptions) => {
      const report = await versionReport(opts)
      if (opts.output === 'json') io.out(JSON.stringify(report, null, 2))
      else for (const line of formatText(report)) io.out(line)
    })
}
