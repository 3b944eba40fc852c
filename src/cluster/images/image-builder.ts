/**
 * Builds Dockerfiles into image archives without Docker, through the scripts the package ships
 * in tools/images/ (buildah with chroot isolation on a store under the cache, base images
 * assembled from Debian packages and the official Node.js binaries: docs/images.md). The tests
 * and `metactl cluster load` use these; the shell scripts are the one place the builder is driven.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** What to build, as `docker build -t tag -f dockerfile context` would. */
export interface BuildImageOptions {
  /** The build context directory. */
  readonly context: string
  /** The image's name, e.g. `ghcr.io/metacontroller-ts/metacontroller-ts:0.1.0`. */
  readonly tag: string
  /** Where the docker-archive tarball goes. */
  readonly output: string
  /** The Dockerfile (default: `<context>/Dockerfile`). */
  readonly dockerfile?: string
  /** `--build-arg` values. */
  readonly buildArgs?: Readonly<Record<string, string>>
  /** Receives each progress line of the build. */
  readonly onProgress?: (line: string) => void
}

/** A script of tools/images/ as shipped in the package (`src/` and `dist/` alike). */
export function imagesScript(name: 'build.sh' | 'buildah.sh' | 'base-images.sh'): string {
  return fileURLToPath(new URL(`../../../tools/images/${name}`, import.meta.url))
}

/** The arguments of tools/images/build.sh for `options` (pure). */
export function buildImageArgs(options: BuildImageOptions): string[] {
  const args = ['-t', options.tag, '-o', options.output]
  if (options.dockerfile !== undefined) args.push('-f', options.dockerfile)
  for (const [key, value] of Object.entries(options.buildArgs ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`bad build argument name "${key}"`)
    args.push('--build-arg', `${key}=${value}`)
  }
  args.push(options.context)
  return args
}

/** Raised when a tools/images script fails; the message ends with its last output lines. */
export class ImageBuildError extends Error {
  override readonly name = 'ImageBuildError'
}

/**
 * Runs a tools/images script, passing each line it writes on stderr to `onProgress`; resolves
 * with the last line it printed on stdout (the scripts print their result there).
 */
export function runImagesScript(
  script: string,
  args: readonly string[],
  onProgress: (line: string) => void = () => undefined
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const tail: string[] = []
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    createInterface({ input: child.stderr }).on('line', (line) => {
      tail.push(line)
      if (tail.length > 15) tail.shift()
      onProgress(line)
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve(stdout.trim().split('\n').at(-1) ?? '')
        return
      }
      const status = signal ?? `exit ${String(code)}`
      reject(
        new ImageBuildError(`${script} failed (${status}); its last lines:\n${tail.join('\n')}`)
      )
    })
  })
}

/** Builds a Dockerfile into a docker-archive tarball; resolves with the archive's path. */
export function buildImage(options: BuildImageOptions): Promise<string> {
  return runImagesScript(imagesScript('build.sh'), buildImageArgs(options), options.onProgress)
}

/**
 * Writes an image of the builder's store (built before by {@link buildImage} or
 * tools/images/build.sh) to a docker-archive tarball named by the image's reference.
 */
export async function exportImage(
  reference: string,
  output: string,
  onProgress?: (line: string) => void
): Promise<string> {
  await runImagesScript(
    imagesScript('buildah.sh'),
    ['push', '--quiet', reference, `docker-archive:${output}:${reference}`],
    onProgress
  )
  return output
}
