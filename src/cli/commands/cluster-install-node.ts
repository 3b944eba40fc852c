/**
 * `metactl cluster install --runtime containerd`: after the control plane's binaries, builds the
 * real node's parts this machine lacks with the scripts the package ships (tools/node,
 * tools/coredns, tools/image-mirror), into the same cache `make node` fills, with their progress.
 *
 * @module
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { missingNodeParts } from '../../cluster/real-node/node-parts.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { clock, installClusterBinaries, requireGo, runScript } from './cluster-install.js'

/** What `cluster install` builds: `kwok` the control plane and KWOK, `containerd` also a real node. */
export type InstallRuntime = 'kwok' | 'containerd'

/** Checks `--runtime`; a {@link CliError} names the two values. */
export function parseInstallRuntime(text: string): InstallRuntime {
  if (text === 'kwok' || text === 'containerd') return text
  throw new CliError(`--runtime must be kwok or containerd, got "${text}"`)
}

/** Options of {@link installNodeParts}. */
export interface NodeInstallOptions {
  readonly io: CliIo
  readonly env?: NodeJS.ProcessEnv
  /** The `tools/` directory holding the scripts (the package's own by default). */
  readonly toolsDir?: string
  /** How often a "still building" line is printed while a script is silent (60 s). */
  readonly heartbeatMs?: number
  readonly now?: () => number
}

/** The package's `tools/` directory (`src/cli/commands` and `dist/cli/commands` alike). */
export function packagedToolsDir(): string {
  return fileURLToPath(new URL('../../../tools', import.meta.url))
}

/** Builds the real node's missing parts, one script at a time, and checks they are all there. */
export async function installNodeParts(options: NodeInstallOptions): Promise<void> {
  const { io } = options
  const env = options.env ?? process.env
  const now = options.now ?? Date.now
  const builds = missingNodeParts(env)
  if (builds.length === 0) {
    io.out("The real node's parts are installed; nothing to build.")
    return
  }
  await requireGo(env)
  const tools = options.toolsDir ?? packagedToolsDir()
  const started = now()
  const progress = (line: string): void => {
    io.err(`  [${clock(now() - started)}] ${line}`)
  }
  io.err(
    `Building the real node's parts: ${builds.map((b) => b.part).join('; ')}. ` +
      'Cold, this takes 20-40 min on 2 cores (Go builds); later installs reuse the caches.'
  )
  for (const build of builds) {
    io.err(`${build.part} (tools/${build.script}): missing ${build.missing.join(', ')}`)
    await runScript(
      join(tools, build.script),
      { ...env, ...build.env },
      progress,
      options.heartbeatMs ?? 60_000
    )
  }
  const left = missingNodeParts(env).flatMap((b) => b.missing)
  if (left.length > 0) {
    throw new CliError(`the build finished but these are still missing: ${left.join(', ')}`)
  }
  io.out(`Installed the real node's parts in ${clock(now() - started)} (min:s).`)
  io.out('Start a cluster with a real node (root): metactl cluster up --runtime containerd')
}

/** `cluster install [--runtime kwok|containerd]`: the control plane, then the node if asked. */
export async function installForRuntime(io: CliIo, runtime: string): Promise<void> {
  const parsed = parseInstallRuntime(runtime)
  await installClusterBinaries({ io })
  if (parsed === 'containerd') await installNodeParts({ io })
}
