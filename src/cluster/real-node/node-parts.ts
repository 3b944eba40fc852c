/**
 * The real node's parts as the package's build scripts make them (containerd, runc, CNI, kubelet,
 * kube-proxy; the pause and web images; CoreDNS; the image mirror), and which of them this machine
 * still lacks: what `metactl cluster install --runtime containerd` builds, in order.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { COREDNS_ARCHIVE, defaultCorednsDir } from './coredns-image.js'
import { defaultImageMirrorBin } from './image-mirror.js'
import {
  defaultNodeBinDir,
  defaultNodeImagesDir,
  HOST_COMMANDS,
  NODE_BINARIES,
} from './node-binaries.js'
import { isExecutable } from '../is-executable.js'

/** One build script to run, and why. */
export interface NodePartBuild {
  /** What it makes, for progress lines. */
  readonly part: string
  /** The script, relative to the package's `tools/` directory. */
  readonly script: string
  /** The files (or host commands) that are missing. */
  readonly missing: readonly string[]
  /** Where it writes: the script's own output variable, from the `METACTL_*` the node reads. */
  readonly env: Readonly<Record<string, string>>
}

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env['PATH'] ?? '').split(delimiter).some((dir) => isExecutable(join(dir, command)))
}

// The script's output variable, when the node is told to look elsewhere than the cache.
function outputEnv(
  env: NodeJS.ProcessEnv,
  metactlName: string,
  scriptName: string
): Record<string, string> {
  const value = env[metactlName]
  return value === undefined ? {} : { [scriptName]: value }
}

/**
 * The scripts to run for the parts this machine lacks, in build order (the images need the
 * node's `oci-image`); empty when the node has everything. Reads only the file system and PATH.
 * tools/node/build.sh also installs the Debian packages of the host commands a node runs, so a
 * missing command schedules it too.
 */
export function missingNodeParts(env: NodeJS.ProcessEnv = process.env): NodePartBuild[] {
  const builds: NodePartBuild[] = []
  const binDir = defaultNodeBinDir(env)
  const commands = HOST_COMMANDS.filter((c) => c !== 'openssl' && !onPath(c, env))
  const bins = NODE_BINARIES.filter((b) => !isExecutable(join(binDir, b))).map((b) =>
    join(binDir, b)
  )
  if (bins.length > 0 || commands.length > 0) {
    builds.push({
      part: 'containerd, runc, CNI plugins, kubelet and kube-proxy (and the host packages)',
      script: 'node/build.sh',
      missing: [...bins, ...commands],
      env: outputEnv(env, 'METACTL_NODE_BIN', 'NODE_BIN'),
    })
  }
  const imagesDir = defaultNodeImagesDir(env)
  const images = ['pause.tar', 'web.tar', 'web-2.tar']
    .map((f) => join(imagesDir, f))
    .filter((f) => !existsSync(f))
  if (images.length > 0) {
    builds.push({
      part: 'the pause and web images',
      script: 'node/images.sh',
      missing: images,
      env: { ...outputEnv(env, 'METACTL_NODE_IMAGES', 'NODE_IMAGES'), ...binEnv(env) },
    })
  }
  const coredns = join(defaultCorednsDir(env), COREDNS_ARCHIVE)
  if (!existsSync(coredns)) {
    builds.push({
      part: 'CoreDNS (cluster DNS) and its image',
      script: 'coredns/build.sh',
      missing: [coredns],
      env: { ...outputEnv(env, 'METACTL_COREDNS_DIR', 'COREDNS_DIR'), ...binEnv(env) },
    })
  }
  const mirror = defaultImageMirrorBin(env)
  if (!isExecutable(mirror)) {
    builds.push({
      part: 'the image mirror',
      script: 'image-mirror/build.sh',
      missing: [mirror],
      env: outputEnv(env, 'METACTL_IMAGE_MIRROR_BIN', 'IMAGE_MIRROR_BIN'),
    })
  }
  return builds
}

// The image scripts run the node's `oci-image` from the bin dir the node build wrote.
function binEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return outputEnv(env, 'METACTL_NODE_BIN', 'NODE_BIN')
}
