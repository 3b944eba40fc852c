/**
 * The `metactl` command line.
 *
 * @module
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Command, CommanderError } from 'commander'
import { MissingBinariesError } from '../testing/control-plane-binaries.js'
import { ControlPlaneStartError } from '../testing/control-plane.js'
import { KubeconfigError } from '../kube/kubeconfig-error.js'
import { ExecCredentialError } from '../kube/exec-credentials.js'
import { CliError } from './cli-error.js'
import { processIo } from './cli-io.js'
import { packageInfo } from './package-info.js'
import type { CliIo } from './cli-io.js'
import { clusterCommand } from './commands/cluster.js'
import { renderCommand } from './commands/render.js'
import { runCommand } from './commands/run.js'
import { completionCommand } from './completion/completion-command.js'
import { devCommand } from './dev/dev-command.js'
import { initCommand } from './init/init-command.js'
import { treeCommand } from './tree/tree-command.js'
import { typesCommand } from './types/types-command.js'
import { versionCommand } from './version/version-command.js'

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
  program.addCommand(runCommand())
  program.addCommand(renderCommand(io))
  program.addCommand(
    clusterCommand(io, (code) => {
      exitCode = code
    })
  )
  program.addCommand(initCommand(io))
  program.addCommand(devCommand(io))
  program.addCommand(treeCommand(io))
  program.addCommand(typesCommand(io))
  program.addCommand(versionCommand(io))
  program.addCommand(completionCommand(io, () => program))
  try {
    await program.parseAsync([...argv])
    return exitCode
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode
    if (error instanceof CliError) {
      io.err(`metactl: ${error.message}`)
      return error.exitCode
    }
    if (
      error instanceof MissingBinariesError ||
      error instanceof ControlPlaneStartError ||
      error instanceof KubeconfigError ||
      error instanceof ExecCredentialError
    ) {
      io.err(`metactl: ${error.message}`)
      return 1
    }
    io.err(`metactl: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    return 1
  }
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
