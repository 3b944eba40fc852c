/**
 * `metactl dev`: runs a controller project against a local cluster with its hooks in-process,
 * reloads them when a source file changes, and the controllers and CRDs when a manifest does.
 *
 * @module
 */
import { readdirSync, watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { Command, Option } from 'commander'
import type { CliIo } from '../cli-io.js'
import { defaultClusterDir } from '../commands/cluster.js'
import { openDevCluster } from './dev-cluster.js'
import { DevSession } from './dev-session.js'
import { HookModule } from './hook-module.js'
import { readProjectManifests } from './project-manifests.js'

interface DevOptions {
  readonly dir: string
  readonly hooks: string
  readonly manifests: string
  readonly kubeconfig?: string
  readonly context?: string
  readonly clusterDir: string
  readonly verbose?: boolean
}

function directoriesUnder(dir: string): string[] {
  const subdirectories = readdirSync(dir, { withFileTypes: true })
    .filter(
      (entry) => entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.')
    )
    .flatMap((entry) => directoriesUnder(join(dir, entry.name)))
  return [dir, ...subdirectories]
}

/**
 * Calls `onChange` (debounced) when a file under `dirs` whose name matches `pattern` changes. One
 * watcher per directory: Node's recursive watch on Linux loses files that editors replace rather
 * than rewrite.
 */
function watchFiles(
  dirs: readonly string[],
  pattern: RegExp,
  onChange: (file: string) => void
): { close(): void } {
  let timer: NodeJS.Timeout | undefined
  const watchers: FSWatcher[] = dirs.map((directory) =>
    watch(directory, (_event, file) => {
      if (file === null || !pattern.test(file)) return
      clearTimeout(timer)
      // Editors write a file in several steps; wait for them to settle.
      timer = setTimeout(() => {
        onChange(join(directory, file))
      }, 150)
    })
  )
  return {
    close: () => {
      clearTimeout(timer)
      for (const watcher of watchers) watcher.close()
    },
  }
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    process.once('SIGINT', () => {
      resolveSignal('SIGINT')
    })
    process.once('SIGTERM', () => {
      resolveSignal('SIGTERM')
    })
  })
}

async function dev(io: CliIo, opts: DevOptions): Promise<void> {
  const projectDir = resolve(opts.dir)
  const manifestDir = resolve(projectDir, opts.manifests)
  const manifests = readProjectManifests(manifestDir, projectDir)
  const module = new HookModule(resolve(projectDir, opts.hooks), projectDir)
  const cluster = await openDevCluster({
    ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }),
    ...(opts.context === undefined ? {} : { context: opts.context }),
    clusterDir: opts.clusterDir,
    crds: manifests.crds,
    progress: (line) => {
      io.err(line)
    },
  })
  let session: DevSession | undefined
  const watchers: { close(): void }[] = []
  try {
    session = await DevSession.start({
      cluster,
      manifests,
      module,
      projectDir,
      io,
      verbose: opts.verbose === true,
      manifestDir: relative(projectDir, manifestDir) || '.',
    })
    const running = session
    const sources = dirname(resolve(projectDir, opts.hooks))
    const shown = (dir: string): string => `${relative(projectDir, dir) || '.'}/`
    watchers.push(
      watchFiles(directoriesUnder(sources), /\.(?:[cm]?[jt]s|json)$/, (file) => {
        void running.reloadHooks(`${relative(projectDir, file)} changed`)
      }),
      watchFiles([manifestDir], /\.ya?ml$/, (file) => {
        void running.reloadManifests(`${relative(projectDir, file)} changed`, () =>
          readProjectManifests(manifestDir, projectDir)
        )
      })
    )
    io.out(`dev: serving ${running.describeControllers()} with ${module.shown} in-process`)
    io.out(
      `dev: edits under ${shown(sources)} reload the hooks, edits to ${shown(manifestDir)}*.yaml the CRDs and controllers`
    )
    io.out(`dev: export KUBECONFIG=${cluster.kubeconfig}`)
    io.out('dev: stop with Ctrl-C (the cluster keeps running; metactl cluster down stops it)')
    await untilSignal()
  } finally {
    for (const watcher of watchers) watcher.close()
    await session?.stop()
    await cluster.close()
  }
}

/** The part of `metactl dev --help` after the options. */
const DEV_HELP = [
  '',
  'It installs the CRDs of --manifests, starts (or reuses) the local cluster of',
  '`metactl cluster up`, and runs each CompositeController and DecoratorController found',
  'there with hooks from --hooks, in this process (the webhook URLs in the manifests are not',
  'used). Saving a file next to the hook module reloads the hooks; saving a manifest applies',
  'the CRDs that changed and restarts the controllers that changed. The caches stay warm.',
  '',
  'Hooks: a controller uses the export of --hooks named after its metadata.name in camelCase',
  '(web-policy -> webPolicy), an object { sync, finalize?, customize? }; without one, the',
  "module's top-level sync, finalize and customize exports.",
  '',
  'Output: one line per sync, from the writes the engine made:',
  '  12:00:01 [greeter] sync Greeting default/hello: created 1 (ConfigMap hello-0), updated 0,',
  '           deleted 0, unchanged 0; status written',
  'a rejected hook answer says why and that nothing was written; a line repeated for the same',
  'parent (retries, resyncs) is printed once, then again with its count: (x3).',
].join('\n')

/** Builds `metactl dev`. */
export function devCommand(io: CliIo): Command {
  return new Command('dev')
    .description(
      'run a controller project on a local cluster with its hooks in-process, reloading hooks and manifests on change'
    )
    .option('--dir <dir>', 'the project directory', '.')
    .option('--hooks <file>', 'the hook module (see "Hooks" below)', 'src/hook.ts')
    .option(
      '--manifests <dir>',
      'directory whose *.yaml CRDs, CompositeControllers and DecoratorControllers to use',
      'deploy'
    )
    .option(
      '--kubeconfig <path>',
      'use the cluster of this kubeconfig (kind, k3d, any running cluster) instead of the local one'
    )
    .option('--context <name>', 'kubeconfig context of that cluster (default: current-context)')
    .addOption(
      new Option(
        '--cluster-dir <dir>',
        'local cluster directory (shared with metactl cluster)'
      ).default(defaultClusterDir(), '$XDG_STATE_HOME/metacontroller-ts/cluster')
    )
    .option('-v, --verbose', "also print the engine's own log lines (info and up)")
    .addHelpText('after', DEV_HELP)
    .action(async (opts: DevOptions) => {
      await dev(io, opts)
    })
}
