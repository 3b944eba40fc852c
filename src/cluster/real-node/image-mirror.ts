/**
 * Extra image archives for a real node (`metactl cluster up --runtime containerd --image …`):
 * imported into containerd like the node's own images, and also served read-only by
 * tools/image-mirror inside the cluster's network namespace, which containerd asks first for any
 * registry the archives' images name (docker.io, gcr.io, …). A Pod whose image has no tag or the
 * tag `latest` is pulled `Always` (upstream's examples have such Pods, e.g. `image: busybox`);
 * with no registry reachable that pull would fail, so the mirror answers it with the archive's
 * image. Nothing leaves the namespace.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { logTail, ManagedProcess } from '../managed-process.js'
import { waitFor } from '../../runtime/clock/wait-for.js'
import { RealNodePrerequisiteError } from './node-binaries.js'
import type { RealNodeLayout } from './real-node-layout.js'

/**
 * Where the mirror listens: the first node's address (`NODE_IP`) in the cluster's own network
 * namespace, which every real node reaches (extra-node-network.ts) and nothing outside does.
 */
export const IMAGE_MIRROR_ADDRESS = '10.245.0.1:5000'

/** containerd's registry hosts directory of a real node (`config_path` of its CRI images). */
export function registryHostsDir(layout: RealNodeLayout): string {
  return join(layout.nodeDir, 'certs.d')
}

/**
 * The registry host of an image reference, as containerd resolves it: the first path part when it
 * looks like a host (a dot, a port or `localhost`), else Docker Hub.
 */
export function registryHost(reference: string): string {
  const first = reference.split('/')[0] ?? ''
  const isHost = reference.includes('/') && (/[.:]/.test(first) || first === 'localhost')
  return isHost ? first : 'docker.io'
}

/** The hosts.toml that sends a registry's pulls to the mirror first. */
export function mirrorHostsToml(host: string): string {
  const server = host === 'docker.io' ? 'https://registry-1.docker.io' : `https://${host}`
  return (
    `server = "${server}"\n\n` +
    `[host."http://${IMAGE_MIRROR_ADDRESS}"]\n` +
    `  capabilities = ["pull", "resolve"]\n`
  )
}

/** The image references an archive (`docker save` layout) is tagged with. */
export function archiveTags(archive: string): string[] {
  const text = execFileSync('tar', ['-xOf', archive, 'manifest.json'], { encoding: 'utf8' })
  const manifest = JSON.parse(text) as { RepoTags?: string[] | null }[]
  return manifest.flatMap((entry) => entry.RepoTags ?? [])
}

/**
 * Writes a node's containerd hosts configuration: pulls from each registry some archive's image
 * names (docker.io for `busybox`, gcr.io for `gcr.io/google_containers/pause`, …) go to the
 * mirror first.
 */
export function writeRegistryHosts(layout: RealNodeLayout, archives: readonly string[]): void {
  const hosts = new Set(archives.flatMap(archiveTags).map(registryHost))
  for (const host of hosts) {
    const hostsDir = join(registryHostsDir(layout), host)
    mkdirSync(hostsDir, { recursive: true })
    writeFileSync(join(hostsDir, 'hosts.toml'), mirrorHostsToml(host))
  }
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
 * Starts the mirror on `archives` in the caller's network namespace (each node's containerd is
 * pointed at it by {@link writeRegistryHosts}); resolves once it serves them all.
 */
export async function startImageMirror(
  layout: RealNodeLayout,
  archives: readonly string[],
  timeoutMs: number
): Promise<ManagedProcess> {
  const bin = requireImageMirror(archives)
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
