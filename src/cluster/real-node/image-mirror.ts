/**
 * Extra image archives for a real node (`metactl cluster up --runtime containerd --image …`):
 * imported into containerd like the node's own images, and also served read-only by
 * tools/image-mirror inside the cluster's network namespace, which containerd asks first for any
 * docker.io image. A Pod whose image has no tag or the tag `latest` is pulled `Always` (upstream's
 * examples have such Pods, e.g. `image: busybox`); with no registry reachable that pull would
 * fail, so the mirror answers it with the archive's image. Nothing leaves the namespace.
 *
 * @module
 */
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { logTail, ManagedProcess } from '../managed-process.js'
import { waitFor } from '../../runtime/clock/wait-for.js'
import { RealNodePrerequisiteError } from './node-binaries.js'
import type { RealNodeLayout } from './real-node-layout.js'

/** Where the mirror listens: loopback of the cluster's own network namespace. */
export const IMAGE_MIRROR_ADDRESS = '127.0.0.1:5000'

/** containerd's registry hosts directory of a real node (`config_path` of its CRI images). */
export function registryHostsDir(layout: RealNodeLayout): string {
  return join(layout.nodeDir, 'certs.d')
}

/** The hosts.toml that sends docker.io pulls to the mirror first. */
export function dockerHubHostsToml(): string {
  return (
    `server = "https://registry-1.docker.io"\n\n` +
    `[host."http://${IMAGE_MIRROR_ADDRESS}"]\n` +
    `  capabilities = ["pull", "resolve"]\n`
  )
}

/**
 * Path of the image-mirror binary tools/image-mirror/build.sh writes (`$METACTL_IMAGE_MIRROR_BIN`
 * overrides it).
 */
export function defaultImageMirrorBin(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  return (
    env['METACTL_IMAGE_MIRROR_BIN'] ??
    join(cache, 'metacontroller-ts', 'controlplane', 'image-mirror-1-ggcr-v0.22.1', 'image-mirror')
  )
}

/** Checks the mirror is built and every archive readable; throws one error saying what to do. */
export function requireImageMirror(archives: readonly string[]): string {
  const problems: string[] = []
  const bin = defaultImageMirrorBin()
  try {
    accessSync(bin, constants.X_OK)
  } catch {
    problems.push(`${bin} is missing: run tools/image-mirror/build.sh`)
  }
  for (const archive of archives) {
    try {
      accessSync(archive, constants.R_OK)
    } catch {
      problems.push(`image archive ${archive} cannot be read`)
    }
  }
  if (problems.length > 0) {
    throw new RealNodePrerequisiteError(`extra images for the real node: ${problems.join('; ')}`)
  }
  return bin
}

/**
 * Writes containerd's hosts configuration and starts the mirror on `archives` in the caller's
 * network namespace; resolves once it serves them all.
 */
export async function startImageMirror(
  layout: RealNodeLayout,
  archives: readonly string[],
  timeoutMs: number
): Promise<ManagedProcess> {
  const bin = requireImageMirror(archives)
  const hostsDir = join(registryHostsDir(layout), 'docker.io')
  mkdirSync(hostsDir, { recursive: true })
  writeFileSync(join(hostsDir, 'hosts.toml'), dockerHubHostsToml())
  const proc = ManagedProcess.start(
    {
      name: 'image-mirror',
      command: bin,
      args: ['-addr', IMAGE_MIRROR_ADDRESS, ...archives],
      logFile: join(layout.logsDir, 'image-mirror.log'),
    },
    true
  )
  try {
    await waitFor(
      async () => {
        if (proc.exitStatus !== undefined) throw new Error(`it exited (${proc.exitStatus})`)
        try {
          const res = await request(`http://${IMAGE_MIRROR_ADDRESS}/healthz`)
          await res.body.text()
          return res.statusCode === 200
        } catch {
          return false
        }
      },
      { timeoutMs, intervalMs: 200, description: 'the image mirror to serve the archives' }
    )
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(
      `image-mirror: ${reason}. Last lines of ${proc.spec.logFile}:\n${logTail(proc.spec.logFile)}`,
      { cause: error }
    )
  }
  return proc
}
