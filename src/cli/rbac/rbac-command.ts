/**
 * `metactl rbac`: the aggregated ClusterRole each CompositeController and DecoratorController
 * needs, computed from its spec (files, or the cluster's), as YAML on stdout.
 *
 * @module
 */
import { Command } from 'commander'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { clusterOptions, connectCluster } from '../cluster-connection.js'
import type { ClusterFlags } from '../cluster-connection.js'
import { rbacManifest } from './rbac-manifest.js'
import type { ControllerSource, RelatedResource } from './rbac-manifest.js'
import { sourcesFromCluster, sourcesFromFiles } from './rbac-sources.js'

/** The parsed flags of `metactl rbac`. */
export interface RbacOptions extends ClusterFlags {
  readonly filename?: string[]
  readonly related?: RelatedResource[]
  readonly label: Record<string, string> | undefined
}

/** Parses `[controller=]apiVersion:resource` (`v1:configmaps`, `web=apps/v1:deployments`). */
export function parseRelated(value: string, previous: RelatedResource[] = []): RelatedResource[] {
  const match = /^(?:([^=:]+)=)?([^=:]+):([^=:/]+)$/.exec(value)
  if (match === null)
    throw new CliError(
      `--related ${value}: expected [controller=]apiVersion:resource, e.g. v1:configmaps or ` +
        'web=apps/v1:deployments'
    )
  const [, controller, apiVersion = '', resource = ''] = match
  return [
    ...previous,
    { ...(controller === undefined ? {} : { controller }), apiVersion, resource },
  ]
}

function parseLabel(value: string, previous: Record<string, string> | undefined) {
  const eq = value.indexOf('=')
  if (eq <= 0) throw new CliError(`--label ${value}: expected key=value`)
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) }
}

/** The command line that reproduces this output, for the roles' comment. */
export function rbacCommandLine(opts: RbacOptions): string {
  return [
    'metactl rbac',
    ...(opts.filename ?? []).map((f) => `-f ${f}`),
    ...(opts.related ?? []).map(
      (r) =>
        `--related ${r.controller === undefined ? '' : `${r.controller}=`}${r.apiVersion}:${r.resource}`
    ),
    ...Object.entries(opts.label ?? {}).map(([k, v]) => `--label ${k}=${v}`),
  ].join(' ')
}

async function readSources(opts: RbacOptions): Promise<ControllerSource[]> {
  if (opts.filename !== undefined) {
    if (opts.kubeconfig !== undefined || opts.context !== undefined)
      throw new CliError('-f reads files; --kubeconfig and --context read a cluster: pick one')
    return sourcesFromFiles(opts.filename)
  }
  const connection = await connectCluster(opts)
  try {
    return await sourcesFromCluster(connection.client)
  } finally {
    await connection.close()
  }
}

const HELP = [
  '',
  'Each controller gets one ClusterRole, metacontroller-ts:<controller>, labelled',
  "metacontroller-ts.dev/aggregate-to-controllers: 'true' (or --label), so that the engine's",
  'aggregated ClusterRole metacontroller-ts:controllers takes its rules in:',
  '  parents and decorator targets     get, list, watch, update, patch; <resource>/status: update',
  '  children and attachments          get, list, watch, create, update, patch, delete',
  '  related resources (--related)     list, watch (customize hook only)',
  '  Secrets, ConfigMaps               list, watch, when webhook TLS or auth settings name them',
  '  ControllerRevisions               list, watch, create, update, delete, when a child rolls',
  '',
  'What a customize hook relates is decided at run time: name it with --related (repeatable;',
  'v1:namespaces when its rules use a namespaceSelector). A controller with a customize hook',
  'and no --related is reported on stderr.',
  '',
  'Examples:',
  '  metactl rbac -f deploy/controller.yaml > deploy/rbac.yaml',
  '  metactl rbac -f deploy/ --related web=v1:configmaps | kubectl apply -f -',
  '  metactl rbac --context kind-dev          # every controller in the cluster',
  '  metactl rbac -f deploy/ --label example.com/aggregate-to-my-release=true',
].join('\n')

/** Builds `metactl rbac`. */
export function rbacCommand(io: CliIo): Command {
  const command = new Command('rbac')
    .description(
      'print the aggregated ClusterRole each CompositeController and DecoratorController needs'
    )
    .option(
      '-f, --filename <path...>',
      'YAML files or directories (their *.yaml) to read controllers from; default: the cluster'
    )
    .option(
      '--related <[controller=]apiVersion:resource>',
      'a resource a customize hook relates (repeatable)',
      parseRelated
    )
    .option(
      '--label <key=value>',
      'aggregation label in place of the default (repeatable)',
      parseLabel
    )
  for (const option of clusterOptions()) command.addOption(option)
  return command.addHelpText('after', HELP).action(async (opts: RbacOptions) => {
    const sources = await readSources(opts)
    const manifest = rbacManifest(sources, {
      related: opts.related ?? [],
      ...(opts.filename === undefined ? {} : { command: rbacCommandLine(opts) }),
      ...(opts.label === undefined ? {} : { labels: opts.label }),
    })
    for (const warning of manifest.warnings) io.err(`warning: ${warning}`)
    if (manifest.yaml === '') {
      const where = opts.filename === undefined ? 'the cluster' : opts.filename.join(', ')
      throw new CliError(`no CompositeController or DecoratorController in ${where}`)
    }
    io.out(manifest.yaml.trimEnd())
  })
}
