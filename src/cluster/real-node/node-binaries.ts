/**
 * Finds the real node's binaries and images in the build cache (tools/node/build.sh and
 * tools/node/images.sh), and checks everything else the node needs, so a machine without it gets
 * one clear error saying what to do instead of a component failing half-way.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { KUBERNETES_VERSION } from '../control-plane-binaries.js'
import { hostCgroupV1Mounts } from './cgroup-root.js'
import { COREDNS_ARCHIVE, defaultCorednsDir } from './coredns-image.js'
import { isExecutable } from '../is-executable.js'

/** containerd release (keep in step with tools/node/build.sh). */
export const CONTAINERD_VERSION = 'v2.4.2'
/** runc release (keep in step with tools/node/build.sh). */
export const RUNC_VERSION = 'v1.5.3'
/** CNI plugins release (keep in step with tools/node/build.sh). */
export const CNI_PLUGINS_VERSION = 'v1.10.0'

/** Paths of the node's binaries and image archives. */
export interface NodeComponentPaths {
  /** Directory of kubelet, kube-proxy, containerd, ctr, the shim and runc; `cni/` holds the plugins. */
  readonly binDir: string
  /** Directory of `pause.tar` and `web.tar`. */
  readonly imagesDir: string
  /** Directory of CoreDNS's image archive, `coredns.tar` (tools/coredns/build.sh). */
  readonly corednsDir: string
}

/** Raised when the machine lacks something the real node needs; the message says what to do. */
export class RealNodePrerequisiteError extends Error {
  override readonly name = 'RealNodePrerequisiteError'
}

function cacheRoot(env: NodeJS.ProcessEnv): string {
  return join(
    env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'),
    'metacontroller-ts',
    'controlplane'
  )
}

/** The directory tools/node/build.sh writes to by default (`$METACTL_NODE_BIN` overrides it). */
export function defaultNodeBinDir(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env['METACTL_NODE_BIN'] ??
    join(
      cacheRoot(env),
      `node-kube-${KUBERNETES_VERSION}-containerd-${CONTAINERD_VERSION}-runc-${RUNC_VERSION}-cni-${CNI_PLUGINS_VERSION}`
    )
  )
}

/** The directory tools/node/images.sh writes to by default (`$METACTL_NODE_IMAGES` overrides it). */
export function defaultNodeImagesDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['METACTL_NODE_IMAGES'] ?? join(cacheRoot(env), 'images-pause-3.10.2-web-2')
}

/** The binaries under the bin dir a real node runs. */
export const NODE_BINARIES: readonly string[] = [
  'kubelet',
  'kube-proxy',
  'containerd',
  'ctr',
  'containerd-shim-runc-v2',
  'runc',
  'cni/bridge',
  'cni/host-local',
  'cni/loopback',
  'cni/portmap',
]

/** Host commands the cluster runs (util-linux, iproute2, iptables, conntrack, openssl). */
export const HOST_COMMANDS: readonly string[] = [
  'unshare',
  'nsenter',
  'ip',
  'iptables',
  'conntrack',
  'openssl',
]

/**
 * What builds a node part: the package's command (a project depending on metacontroller-ts has no
 * Makefile of ours), and the shipped script it runs for this part.
 */
function buildCommand(script: 'node/build.sh' | 'node/images.sh' | 'coredns/build.sh'): string {
  const path = fileURLToPath(new URL(`../../../tools/${script}`, import.meta.url))
  return `run \`${INSTALL_NODE_COMMAND}\` (it runs \`bash ${path}\`)`
}

/** The command that builds every missing part of the real node. */
export const INSTALL_NODE_COMMAND = 'metactl cluster install --runtime containerd'

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env['PATH'] ?? '').split(delimiter).some((dir) => isExecutable(join(dir, command)))
}

/**
 * Lists what this machine lacks for a real node, each with what to do; empty when nothing.
 * Pure apart from reading the file system, so it runs before anything starts.
 */
export function missingPrerequisites(
  paths: NodeComponentPaths,
  env: NodeJS.ProcessEnv = process.env
): string[] {
  const missing: string[] = []
  if (process.platform !== 'linux') return ['a real node needs Linux (namespaces, cgroups)']
  if (process.getuid?.() !== 0) {
    missing.push('root: the real node creates namespaces, cgroups and mounts; run as root')
  }
  const bins = NODE_BINARIES.filter((b) => !isExecutable(join(paths.binDir, b)))
  if (bins.length > 0) {
    missing.push(`${bins.join(', ')} in ${paths.binDir}: ${buildCommand('node/build.sh')}`)
  }
  const images = ['pause.tar', 'web.tar'].filter((f) => !existsSync(join(paths.imagesDir, f)))
  if (images.length > 0) {
    missing.push(`${images.join(', ')} in ${paths.imagesDir}: ${buildCommand('node/images.sh')}`)
  }
  if (!existsSync(join(paths.corednsDir, COREDNS_ARCHIVE))) {
    missing.push(`${COREDNS_ARCHIVE} in ${paths.corednsDir}: ${buildCommand('coredns/build.sh')}`)
  }
  const commands = HOST_COMMANDS.filter((c) => !onPath(c, env))
  if (commands.length > 0) {
    missing.push(
      `${commands.join(', ')} on PATH: install them (the Debian packages util-linux, iproute2, iptables, conntrack and openssl)`
    )
  }
  if (hostCgroupV1Mounts().length === 0) {
    missing.push(
      'cgroup v1 hierarchies under /sys/fs/cgroup: the node is set up for cgroup v1 hosts'
    )
  }
  if (!readFileSync('/proc/filesystems', 'utf8').includes('overlay')) {
    missing.push('overlayfs in the kernel (containerd unpacks images with it)')
  }
  return missing
}

/**
 * Returns the node's paths when this machine has everything, else throws one error listing all
 * that is missing and what to do.
 *
 * @throws {@link RealNodePrerequisiteError}
 */
export function requireRealNodePrerequisites(
  env: NodeJS.ProcessEnv = process.env
): NodeComponentPaths {
  const paths = {
    binDir: defaultNodeBinDir(env),
    imagesDir: defaultNodeImagesDir(env),
    corednsDir: defaultCorednsDir(env),
  }
  const missing = missingPrerequisites(paths, env)
  if (missing.length > 0) {
    throw new RealNodePrerequisiteError(
      `a real node cannot start on this machine; it needs:\n${missing.map((m) => `  - ${m}`).join('\n')}`
    )
  }
  return paths
}
