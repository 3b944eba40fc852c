/**
 * `metactl cluster install`: builds the local cluster's binaries (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kwok) with the build scripts the package ships
 * (`tools/controlplane/build.sh`, `tools/kwok/build.sh`), printing their progress with the time
 * spent, and does nothing when they are all there.
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'
import {
  COLD_BUILD_ESTIMATE,
  defaultBinaryDir,
  ETCD_VERSION,
  KUBERNETES_VERSION,
  KWOK_VERSION,
  missingBinaries,
} from '../../cluster/control-plane-binaries.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'

/** The build scripts, as shipped in the package (`files` in package.json). */
export interface BuildScripts {
  readonly controlplane: string
  readonly kwok: string
}

/** Options of {@link installClusterBinaries}. */
export interface InstallOptions {
  readonly io: CliIo
  readonly env?: NodeJS.ProcessEnv
  readonly scripts?: BuildScripts
  /** How often a "still building" line is printed while a script is silent (60 s). */
  readonly heartbeatMs?: number
  readonly now?: () => number
}

/** The package's own build scripts (`src/cli/commands` and `dist/cli/commands` alike). */
export function packagedBuildScripts(): BuildScripts {
  const path = (relative: string): string =>
    fileURLToPath(new URL(`../../../${relative}`, import.meta.url))
  return { controlplane: path('tools/controlplane/build.sh'), kwok: path('tools/kwok/build.sh') }
}

const MIN_GO_MINOR = 26

function goVersion(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('go', ['env', 'GOVERSION'], { env }, (error, stdout) => {
      resolve(error === null ? stdout.trim() : undefined)
    })
  })
}

/** Throws a {@link CliError} saying what to do when `go` is missing or older than 1.26. */
export async function requireGo(env: NodeJS.ProcessEnv): Promise<void> {
  const version = await goVersion(env)
  const minor = /^go1\.(\d+)/.exec(version ?? '')?.[1]
  if (minor !== undefined && Number(minor) >= MIN_GO_MINOR) return
  const found = version === undefined ? 'no `go` on PATH' : `found ${version}`
  throw new CliError(
    `metactl cluster install builds the binaries from Go modules and needs Go >= 1.${MIN_GO_MINOR} ` +
      `(${found}): install Go and run it again, or use a running cluster with ` +
      '--kubeconfig/--context instead of the local one'
  )
}

/** `mm:ss` of a duration. */
export function clock(ms: number): string {
  const seconds = Math.floor(ms / 1000)
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`
}

/** Runs one build script, printing each line it writes with the time since the install began. */
export function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void,
  heartbeatMs: number
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let silentSince = Date.now()
    const heartbeat = setInterval(() => {
      if (Date.now() - silentSince >= heartbeatMs) {
        progress('still building (the Go compiler prints nothing until a binary is done)')
        silentSince = Date.now()
      }
    }, heartbeatMs)
    const tail: string[] = []
    createInterface({ input: child.stderr }).on('line', (line) => {
      silentSince = Date.now()
      tail.push(line)
      if (tail.length > 20) tail.shift()
      progress(line)
    })
    child.on('error', (error) => {
      clearInterval(heartbeat)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearInterval(heartbeat)
      if (code === 0) resolve()
      else reject(new CliError(`${script} failed (${signal ?? `exit ${String(code)}`})`))
    })
  })
}

/**
 * Builds whatever binaries are missing. The output locations follow the same variables the
 * harness reads: `METACTL_CONTROLPLANE_BIN` (else the cache under `$XDG_CACHE_HOME`) and
 * `METACTL_KWOK_BIN`.
 */
export async function installClusterBinaries(options: InstallOptions): Promise<void> {
  const { io } = options
  const env = options.env ?? process.env
  const now = options.now ?? Date.now
  const dir = env['METACTL_CONTROLPLANE_BIN'] ?? defaultBinaryDir(env)
  const missing = missingBinaries(env)
  if (missing.length === 0) {
    io.out(`The local cluster's binaries are installed (${dir}); nothing to build.`)
    return
  }
  await requireGo(env)
  const scripts = options.scripts ?? packagedBuildScripts()
  const started = now()
  const progress = (line: string): void => {
    io.err(`  [${clock(now() - started)}] ${line}`)
  }
  io.err(
    `Building ${missing.join(', ')} from Go modules (Kubernetes ${KUBERNETES_VERSION}, ` +
      `etcd ${ETCD_VERSION}, KWOK ${KWOK_VERSION}) into ${dir}.`
  )
  io.err(
    `A cold build takes ${COLD_BUILD_ESTIMATE} (measured: 11 min for etcd, kube-apiserver and ` +
      'kube-controller-manager, 4 min for kwok); later installs reuse the Go caches.'
  )
  const scriptEnv: NodeJS.ProcessEnv = {
    ...env,
    ...(env['METACTL_CONTROLPLANE_BIN'] === undefined
      ? {}
      : { CONTROLPLANE_BIN: env['METACTL_CONTROLPLANE_BIN'] }),
    ...(env['METACTL_KWOK_BIN'] === undefined ? {} : { KWOK_BIN: env['METACTL_KWOK_BIN'] }),
  }
  const heartbeatMs = options.heartbeatMs ?? 60_000
  if (missing.some((name) => name !== 'kwok')) {
    await runScript(scripts.controlplane, scriptEnv, progress, heartbeatMs)
  }
  if (missing.includes('kwok')) await runScript(scripts.kwok, scriptEnv, progress, heartbeatMs)
  const left = missingBinaries(env)
  if (left.length > 0) {
    throw new CliError(`the build finished but ${left.join(', ')} still cannot be found`)
  }
  io.out(`Installed ${missing.join(', ')} in ${clock(now() - started)} (min:s) into ${dir}.`)
  io.out('Start the local cluster with `metactl cluster up`, or just run `metactl dev`.')
}
