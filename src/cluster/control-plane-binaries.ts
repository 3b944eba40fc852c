import { homedir } from 'node:os'
import { join } from 'node:path'
import { isExecutable } from './is-executable.js'

/** Kubernetes release the local control plane is built from (keep in step with build.sh). */
export const KUBERNETES_VERSION = 'v1.37.2'
/** etcd release built alongside it (keep in step with build.sh). */
export const ETCD_VERSION = 'v3.7.3'
/** KWOK release that simulates nodes (keep in step with tools/kwok/build.sh and go.mod). */
export const KWOK_VERSION = 'v0.8.0'

/**
 * Paths of the control-plane binaries. The scheduler and KWOK are only needed for a control plane
 * with nodes, so they are absent (not an error) when they are not built.
 */
export interface ControlPlaneBinaries {
  readonly dir: string
  readonly etcd: string
  readonly kubeApiserver: string
  readonly kubeControllerManager: string
  /** kube-scheduler, from the same directory; `undefined` when it is not built. */
  readonly kubeScheduler?: string | undefined
  /** The KWOK controller (simulated nodes); `undefined` when it is not built. */
  readonly kwok?: string | undefined
}

/** Raised when the control-plane binaries are not built yet; the message says how to build them. */
export class MissingBinariesError extends Error {
  override readonly name = 'MissingBinariesError'
}

/** Returns the directory `tools/controlplane/build.sh` writes to by default. */
export function defaultBinaryDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  return join(
    cacheRoot,
    'metacontroller-ts',
    'controlplane',
    `kube-${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}`
  )
}

/** Returns the path `tools/kwok/build.sh` writes the KWOK binary to by default. */
export function defaultKwokPath(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  return join(cacheRoot, 'metacontroller-ts', 'controlplane', `kwok-${KWOK_VERSION}`, 'kwok')
}

// `$METACTL_KWOK_BIN`, else a `kwok` next to the other binaries, else the build cache.
function findKwok(dir: string, env: NodeJS.ProcessEnv): string | undefined {
  const explicit = env['METACTL_KWOK_BIN']
  if (explicit !== undefined) return isExecutable(explicit) ? explicit : undefined
  return [join(dir, 'kwok'), defaultKwokPath(env)].find(isExecutable)
}

/** The command that builds the missing binaries, named by every "missing binaries" message. */
export const INSTALL_COMMAND = 'npx metactl cluster install'

/** What a cold `metactl cluster install` costs, as measured in docs/control-plane.md. */
export const COLD_BUILD_ESTIMATE = 'about 16 min on 2 idle cores, up to an hour on busy ones'

const INSTALL_HINT =
  `Install them with \`${INSTALL_COMMAND}\` (builds them from Go modules once, Go >= 1.26, ` +
  `${COLD_BUILD_ESTIMATE}), or use a running cluster (--kubeconfig/--context; ` +
  'METACTL_USE_EXISTING_CLUSTER=1 with KUBECONFIG in tests).'

/** The names of the five binaries a control plane with nodes runs that are not found. */
export function missingBinaries(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env['METACTL_CONTROLPLANE_BIN'] ?? defaultBinaryDir(env)
  const kube = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']
  return [
    ...kube.filter((name) => !isExecutable(join(dir, name))),
    ...(findKwok(dir, env) === undefined ? ['kwok'] : []),
  ]
}

/**
 * Locates the control-plane binaries: `$METACTL_CONTROLPLANE_BIN`, else the build cache.
 *
 * @throws {@link MissingBinariesError} naming every missing binary and the command that installs
 * them.
 */
export function findControlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env
): ControlPlaneBinaries {
  const dir = env['METACTL_CONTROLPLANE_BIN'] ?? defaultBinaryDir(env)
  const scheduler = join(dir, 'kube-scheduler')
  const binaries = {
    dir,
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeScheduler: isExecutable(scheduler) ? scheduler : undefined,
    kwok: findKwok(dir, env),
  }
  if ([binaries.etcd, binaries.kubeApiserver, binaries.kubeControllerManager].every(isExecutable)) {
    return binaries
  }
  throw new MissingBinariesError(
    `the local cluster's binaries are missing from ${dir}: ${missingBinaries(env).join(', ')}. ` +
      INSTALL_HINT
  )
}

/** The binaries a control plane with nodes needs, all present. */
export interface NodeBinaries {
  readonly kubeScheduler: string
  readonly kwok: string
}

/**
 * Returns the scheduler and KWOK paths of `binaries`.
 *
 * @throws {@link MissingBinariesError} naming what is missing and the command that installs it.
 */
export function requireNodeBinaries(binaries: ControlPlaneBinaries): NodeBinaries {
  const { kubeScheduler, kwok } = binaries
  if (kubeScheduler !== undefined && kwok !== undefined) return { kubeScheduler, kwok }
  const missing = [
    kubeScheduler === undefined ? join(binaries.dir, 'kube-scheduler') : undefined,
    kwok === undefined ? 'kwok (METACTL_KWOK_BIN, or the build cache)' : undefined,
  ].filter((m) => m !== undefined)
  throw new MissingBinariesError(
    `a local cluster with nodes needs ${missing.join(' and ')}. ${INSTALL_HINT} ` +
      'Without them, start the control plane with nodes: 0 (`metactl cluster up --nodes 0`).'
  )
}

/**
 * Returns the kube-scheduler path of `binaries`.
 *
 * @throws {@link MissingBinariesError} saying how to build it.
 */
export function requireScheduler(binaries: ControlPlaneBinaries): string {
  if (binaries.kubeScheduler !== undefined) return binaries.kubeScheduler
  throw new MissingBinariesError(
    `${join(binaries.dir, 'kube-scheduler')} is missing. Build it with \`make controlplane\` ` +
      '(tools/controlplane/build.sh).'
  )
}

/**
 * The scheduler and KWOK binaries a plane with `nodes` simulated nodes needs, checked before
 * anything starts so a missing binary fails fast with the command to run; `undefined` when it
 * needs neither (no simulated node and no real node joining).
 */
export function nodeBinariesFor(
  binaries: ControlPlaneBinaries,
  nodes: number,
  realNodeJoins: boolean
): NodeBinaries | undefined {
  if (nodes > 0) return requireNodeBinaries(binaries)
  // A real node joins: the scheduler is needed, KWOK is not (it never starts).
  return realNodeJoins ? { kubeScheduler: requireScheduler(binaries), kwok: '' } : undefined
}
