/**
 * Loads images into the containerd of a running real node's cluster (`metactl cluster load`, in
 * the spirit of `kind load`): no restart, the kubelet finds them at once. An argument that is a
 * file is an image archive (docker-archive or OCI, as `docker save` or tools/images/build.sh
 * write); any other is an image of the builder's store, exported to an archive first.
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { isProcessRunning } from '../managed-process.js'
import { defaultNodeBinDir } from '../real-node/node-binaries.js'
import { MAX_REAL_NODES, realNodeLayout } from '../real-node/real-node-layout.js'
import { componentName } from '../real-node/node-components.js'
import { readRealNodeState } from '../real-node/real-node-state.js'
import { exportImage } from './image-builder.js'

const execFileAsync = promisify(execFile)

/** Raised when the images cannot be loaded; the message says why and what to do. */
export class ImageLoadError extends Error {
  override readonly name = 'ImageLoadError'
}

/** One argument of `cluster load`, classified. */
export type LoadSource =
  | { readonly kind: 'archive'; readonly path: string }
  | { readonly kind: 'image'; readonly reference: string }

// A Docker image reference: [host[:port]/]path[:tag][@digest], lower-case path components.
const REFERENCE =
  /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/

/**
 * Classifies each argument: an existing file is an archive, a valid image reference an image of
 * the builder's store; anything else is an error naming the argument.
 */
export function classifyLoadSources(
  args: readonly string[],
  isFile: (path: string) => boolean
): LoadSource[] {
  if (args.length === 0) throw new ImageLoadError('name at least one image archive or image')
  return args.map((arg) => {
    if (isFile(arg)) return { kind: 'archive', path: resolve(arg) }
    if (arg.includes('/') && existsSync(arg)) {
      throw new ImageLoadError(`${arg} is not a file: give an image archive (.tar)`)
    }
    if (REFERENCE.test(arg)) return { kind: 'image', reference: arg }
    throw new ImageLoadError(`${arg} is neither an image archive nor an image reference`)
  })
}

/** Whether `path` names a regular file. */
export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * Returns the sockets of the running containerd of every real node in `dir` (node 1 first) or
 * throws an {@link ImageLoadError} saying what is wrong: no cluster, a cluster without a real
 * node, a stopped one, or missing node binaries. Every node gets the images, as `kind load` loads
 * every node, so a Pod finds them wherever it is scheduled.
 */
export function runningContainerd(dir: string): { sockets: string[]; ctr: string } {
  const layout = realNodeLayout(dir)
  const state = readRealNodeState(layout.stateFile)
  if (state === undefined) {
    throw new ImageLoadError(
      `no cluster with a real node in ${dir}: images load into a real node's containerd; ` +
        'start one with `metactl cluster up --runtime containerd` (a cluster of simulated ' +
        'nodes runs no images)'
    )
  }
  const containerd = state.processes.find((p) => p.name === 'containerd')
  if (containerd === undefined || !isProcessRunning(containerd.pid, containerd.command)) {
    throw new ImageLoadError(
      `the real node in ${dir} is not running (containerd stopped); ` +
        `start it again: metactl cluster down --cluster-dir ${dir} && metactl cluster up --runtime containerd --cluster-dir ${dir}`
    )
  }
  const ctr = join(defaultNodeBinDir(), 'ctr')
  if (!existsSync(ctr)) {
    throw new ImageLoadError(`${ctr} is missing: the real node's binaries are not installed`)
  }
  const sockets = [layout.containerdSocket]
  for (let index = 2; index <= MAX_REAL_NODES; index++) {
    const proc = state.processes.find((p) => p.name === componentName({ index }, 'containerd'))
    if (proc === undefined) continue
    if (!isProcessRunning(proc.pid, proc.command)) {
      throw new ImageLoadError(
        `real node ${index} in ${dir} is not running (containerd stopped); ` +
          `start the cluster again: metactl cluster down --cluster-dir ${dir}, then cluster up`
      )
    }
    sockets.push(realNodeLayout(dir, index).containerdSocket)
  }
  return { sockets, ctr }
}

/** Options of {@link loadImages}. */
export interface LoadImagesOptions {
  /** The cluster directory (`metactl cluster up --dir`). */
  readonly dir: string
  readonly sources: readonly LoadSource[]
  readonly onProgress?: (line: string) => void
}

/** Imports every source into the real node's `k8s.io` namespace; resolves with their names. */
export async function loadImages(options: LoadImagesOptions): Promise<string[]> {
  const { sockets, ctr } = runningContainerd(options.dir)
  const progress = options.onProgress ?? (() => undefined)
  const scratch = mkdtempSync(join(tmpdir(), 'metactl-load-'))
  const loaded: string[] = []
  try {
    for (const [index, source] of options.sources.entries()) {
      let archive: string
      if (source.kind === 'archive') {
        archive = source.path
      } else {
        progress(`exporting ${source.reference} from the image builder's store`)
        archive = await exportImage(source.reference, join(scratch, `image-${index}.tar`), progress)
      }
      const names = new Set<string>()
      for (const [node, socket] of sockets.entries()) {
        const where = sockets.length === 1 ? "the real node's containerd" : `real node ${node + 1}`
        progress(`importing ${archive} into ${where}`)
        for (const name of await ctrImport(ctr, socket, archive)) names.add(name)
      }
      loaded.push(...names)
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return loaded
}

/**
 * Docker's full form of an image name: `hook:dev` is `docker.io/library/hook:dev`, `team/hook:1`
 * is `docker.io/team/hook:1`; a name with a registry host stays as it is.
 */
export function normalizeImageName(name: string): string {
  const slash = name.indexOf('/')
  if (slash < 0) return `docker.io/library/${name}`
  const first = name.slice(0, slash)
  if (first.includes('.') || first.includes(':') || first === 'localhost') return name
  return `docker.io/${name}`
}

/**
 * The image names an archive holds: `RepoTags` of a docker-archive's manifest.json, or the name
 * annotations of an OCI archive's index.json (pure: takes the two files' text).
 */
export function archiveImageNames(manifestJson?: string, indexJson?: string): string[] {
  if (manifestJson !== undefined) {
    const entries = JSON.parse(manifestJson) as { RepoTags?: string[] | null }[]
    return entries.flatMap((entry) => entry.RepoTags ?? []).map(normalizeImageName)
  }
  if (indexJson !== undefined) {
    const index = JSON.parse(indexJson) as {
      manifests?: { annotations?: Record<string, string> }[]
    }
    return (index.manifests ?? []).flatMap((m) => {
      const name = m.annotations?.['io.containerd.image.name']
      return name === undefined ? [] : [normalizeImageName(name)]
    })
  }
  return []
}

async function readFromTar(archive: string, member: string): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync('tar', ['-xOf', archive, member], {
      maxBuffer: 16 * 1024 * 1024,
    })
    return stdout
  } catch {
    return undefined
  }
}

// Imports one archive, then checks containerd lists every name the archive holds.
async function ctrImport(ctr: string, socket: string, archive: string): Promise<string[]> {
  const names = archiveImageNames(
    await readFromTar(archive, 'manifest.json'),
    await readFromTar(archive, 'index.json')
  )
  const run = (args: string[]): Promise<{ stdout: string }> =>
    execFileAsync(ctr, ['--address', socket, '-n', 'k8s.io', 'images', ...args])
  try {
    await run(['import', archive])
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    const reason =
      typeof stderr === 'string' && stderr.trim() !== '' ? stderr.trim() : String(error)
    throw new ImageLoadError(`containerd could not import ${archive}: ${reason}`)
  }
  const listed = new Set((await run(['ls', '-q'])).stdout.split('\n'))
  const missing = names.filter((name) => !listed.has(name))
  if (names.length === 0 || missing.length > 0) {
    throw new ImageLoadError(
      `${archive} was imported but holds no image name the node now lists ` +
        `(${missing.join(', ') || 'no name in the archive'}): tag the image when building it`
    )
  }
  return names
}
