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
import type { CliIo } from './cli-io.js'
import { clusterCommand } from './commands/cluster.js'
import { renderCommand } from './commands/render.js'
import { runCommand } from './commands/run.js'

/** The package version, shown by `metactl --version`. */
export const VERSION = '0.1.0'

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
