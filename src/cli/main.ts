/**
 * The `metactl` command line.
 *
 * @module
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError } from 'commander'
import { CliError } from './cli-error.js'
import { clusterErrorLine } from './cluster-error-line.js'
import { processIo } from './cli-io.js'
import { packageInfo } from './package-info.js'
import type { CliIo } from './cli-io.js'

/** What a subcommand's factory may need from `main`. */
interface CommandScope {
  readonly io: CliIo
  readonly setExitCode: (code: number) => void
  readonly root: () => Command
}

/**
 * Every subcommand, in help order, each behind a dynamic import: `metactl run` then loads the
 * engine only, not the control plane, the scaffolder, YAML output or the type generator, which
 * would stay in its memory for as long as it runs.
 */
const COMMANDS: Readonly<Record<string, () => Promise<(scope: CommandScope) => Command>>> = {
  run: async () => {
    const { runCommand } = await import('./commands/run.js')
    return () => runCommand()
  },
  render: async () => {
    const { renderCommand } = await import('./commands/render.js')
    return ({ io }) => renderCommand(io)
  },
  cluster: async () => {
    const { clusterCommand } = await import('./commands/cluster.js')
    return ({ io, setExitCode }) => clusterCommand(io, setExitCode)
  },
  init: async () => {
    const { initCommand } = await import('./init/init-command.js')
    return ({ io }) => initCommand(io)
  },
  dev: async () => {
    const { devCommand } = await import('./dev/dev-command.js')
    return ({ io }) => devCommand(io)
  },
  ring: async () => {
    const { ringCommand } = await import('./ring/ring-command.js')
    return ({ io }) => ringCommand(io)
  },
  sync: async () => {
    const { syncCommand } = await import('./sync/sync-command.js')
    return ({ io, setExitCode }) => syncCommand(io, setExitCode)
  },
  tree: async () => {
    const { treeCommand } = await import('./tree/tree-command.js')
    return ({ io }) => treeCommand(io)
  },
  rbac: async () => {
    const { rbacCommand } = await import('./rbac/rbac-command.js')
    return ({ io }) => rbacCommand(io)
  },
  types: async () => {
    const { typesCommand } = await import('./types/types-command.js')
    return ({ io }) => typesCommand(io)
  },
  version: async () => {
    const { versionCommand } = await import('./version/version-command.js')
    return ({ io }) => versionCommand(io)
  },
  completion: async () => {
    const { completionCommand } = await import('./completion/completion-command.js')
    return ({ io, root }) => completionCommand(io, root)
  },
}

/**
 * The subcommands to build: only the one argv names, except for help, unknown names and
 * `completion`, which need the whole tree.
 */
function commandsFor(argv: readonly string[]): string[] {
  const name = argv[2]
  if (name !== undefined && name !== 'completion' && Object.hasOwn(COMMANDS, name)) return [name]
  return Object.keys(COMMANDS)
}

/** The package version, shown by `metactl --version` (read from package.json). */
export const VERSION: string = packageInfo().version

/** Runs `metactl` with the given argv (including node and script) and returns the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0
  const program = new Command('metactl')
    .description('Kubernetes lambda controllers in TypeScript, compatible with Metacontroller')
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => {
        io.out(text.trimEnd())
      },
      writeErr: (text) => {
        io.err(text.trimEnd())
      },
    })
    .showHelpAfterError('(run with --help for usage)')
  const scope: CommandScope = {
    io,
    setExitCode: (code) => {
      exitCode = code
    },
    root: () => program,
  }
  for (const name of commandsFor(argv)) {
    const load = COMMANDS[name]
    if (load !== undefined) program.addCommand((await load())(scope))
  }
  try {
    await program.parseAsync([...argv])
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode
    if (error instanceof CliError) {
      io.err(`metactl: ${error.message}`)
      return error.exitCode
    }
    const line = clusterErrorLine(error)
    if (line !== undefined) {
      io.err(`metactl: ${line}`)
      return 1
    }
    if (error instanceof Error && (await isControlPlaneStartError(error))) {
      io.err(`metactl: ${error.message}`)
      return 1
    }
    io.err(`metactl: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return 1
  }
}

/** Checks without loading the control plane for every command: only failures pay for it. */
async function isControlPlaneStartError(error: Error): Promise<boolean> {
  const { ControlPlaneStartError } = await import('../cluster/control-plane.js')
  return error instanceof ControlPlaneStartError
}

function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv)
}
