/**
 * `metactl dev`: runs a controller project against a local cluster with its hooks in-process,
 * and reloads them when a source file changes.
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
 * Calls `onChange` (debounced) when a source file under `dir` changes. One watcher per directory:
 * Node's recursive watch on Linux loses files that editors replace rather than rewrite.
 */
function watchSources(dir: string, onChange: (file: string) => void): { close(): void } {
  let timer: NodeJS.Timeout | undefined
  const watchers: FSWatcher[] = directoriesUnder(dir).map((directory) =>
    watch(directory, (_event, file) => {
      if (file === null || !/\.(?:[cm]?[jt]s|json)$/.test(file)) return
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
  const { crds, controllers } = readProjectManifests(
    resolve(projectDir, opts.manifests),
    projectDir
  )
  const module = new HookModule(resolve(projectDir, opts.hooks), projectDir)
  const cluster = await openDevCluster({
    ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }),
    ...(opts.context === undefined ? {} : { context: opts.context }),
    clusterDir: opts.clusterDir,
    crds,
    progress: (line) => {
      io.err(line)
    },
  })
  let session: DevSession | undefined
  let watcher: { close(): void } | undefined
  try {
    session = await DevSession.start({ cluster, controllers, module, projectDir, io })
    const running = session
    const sources = dirname(resolve(projectDir, opts.hooks))
    watcher = watchSources(sources, (file) => {
      void running.reload(`${relative(projectDir, file)} changed`)
    })
    const names = controllers.map((c) => c.metadata.name ?? '').join(', ')
    io.out(
      `dev: serving ${names} with ${module.shown} in-process; edits under ${relative(projectDir, sources) || '.'}/ reload it`
    )
    io.out(`dev: export KUBECONFIG=${cluster.kubeconfig}`)
    io.out('dev: stop with Ctrl-C (the cluster keeps running; metactl cluster down stops it)')
    await untilSignal()
  } finally {
    watcher?.close()
    await session?.stop()
    await cluster.close()
  }
}

/** Builds `metactl dev`. */
export function devCommand(io: CliIo): Command {
  return new Command('dev')
    .description(
      'run a controller project on a local cluster with its hooks in-process, reloading them on change'
    )
    .option('--dir <dir>', 'the project directory', '.')
    .option(
      '--hooks <file>',
      'the hook module (exports sync, and optionally finalize, customize)',
      'src/hook.ts'
    )
    .option(
      '--manifests <dir>',
      'directory whose *.yaml CRDs and CompositeControllers to use',
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
    .addHelpText(
      'after',
      [
        '',
        'It installs the CRDs of --manifests, starts (or reuses) the local cluster of',
        '`metactl cluster up`, runs each CompositeController found there with the hooks of',
        '--hooks in this process (the webhook URLs in the manifests are not used), prints each',
        "sync's children and status, and hook errors with their source lines. Saving a file next",
        'to the hook module reloads it without restarting the cluster or losing the caches.',
      ].join('\n')
    )
    .action(async (opts: DevOptions) => {
      await dev(io, opts)
    })
}
