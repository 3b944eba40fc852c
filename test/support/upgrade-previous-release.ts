// The two releases the upgrade tests move between: the previous one (the chart and the engine
// image as of PREVIOUS_COMMIT, extracted with `git archive` and built by tools/node/app-images.sh
// with ENGINE_SOURCE) and the current one (the checkout's chart and image). Both images are built
// the fast way (the host's Node.js, no Dockerfile) and cached under .tmp/: rebuilt only when a
// source is newer than the archive.
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'

/**
 * The previous release: main at the end of the round before issue 35 (the changelog of that
 * round, 2026-12-05 23:23 UTC). Its chart has replicas, leader election, sharding and the PDB
 * values the tests set; its engine differs from today's in 112 files of src/ (among them
 * sharding's shard buckets and the children's buckets), so the upgrade is a real one.
 */
export const PREVIOUS_COMMIT = '3a6fe411f5c5808a19a9afc5922826271bcc9d36'

/** The image repository of both releases (the chart's default). */
export const ENGINE_REPOSITORY = 'ghcr.io/metacontroller-ts/metacontroller-ts'

/** A release the tests install: its chart directory, and the image archive and tag it runs. */
export interface EngineRelease {
  readonly name: string
  readonly chart: string
  readonly imageArchive: string
  /** The chart's `image.tag` value that runs this image (`undefined`: the chart's default). */
  readonly imageTag: string | undefined
  /** The Metacontroller CRD files of this release (deploy/crds). */
  readonly crds: readonly string[]
}

function crdFiles(tree: string): string[] {
  const dir = join(tree, 'deploy', 'crds')
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .map((name) => join(dir, name))
}

/** What the archive holds: enough to build the engine image and to install the chart. */
const ARCHIVED_PATHS = [
  'src',
  'bin',
  'deploy',
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  'tsconfig.build.json',
]

function appImages(repo: string, env: NodeJS.ProcessEnv): string {
  const out = execFileSync('bash', [join(repo, 'tools', 'node', 'app-images.sh')], {
    cwd: repo,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return out.trim().split('\n').at(-1) ?? ''
}

/** Production dependencies of a package.json, as one comparable string. */
function productionDependencies(packageJson: string): string {
  const parsed = JSON.parse(readFileSync(packageJson, 'utf8')) as {
    dependencies?: Record<string, string>
  }
  return JSON.stringify(Object.entries(parsed.dependencies ?? {}).sort())
}

/**
 * Extracts PREVIOUS_COMMIT's tree once into `.tmp/upgrade-<commit>/tree` and builds its engine
 * image, tagged with the short commit. Throws when its production dependencies differ from the
 * checkout's (the image takes the checkout's node_modules).
 */
export function previousRelease(repo: string): EngineRelease {
  const short = PREVIOUS_COMMIT.slice(0, 12)
  const dir = join(repo, '.tmp', `upgrade-${short}`)
  const tree = join(dir, 'tree')
  const done = join(dir, 'extracted')
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(tree, { recursive: true })
    const archive = execFileSync('git', ['archive', PREVIOUS_COMMIT, ...ARCHIVED_PATHS], {
      cwd: repo,
      maxBuffer: 256 * 1024 * 1024,
    })
    execFileSync('tar', ['-x', '-C', tree], { input: archive })
    // The compiler resolves the tree's imports and types from the checkout's packages.
    symlinkSync(join(repo, 'node_modules'), join(tree, 'node_modules'))
    writeFileSync(done, `${PREVIOUS_COMMIT}\n`)
  }
  const ours = productionDependencies(join(repo, 'package.json'))
  const theirs = productionDependencies(join(tree, 'package.json'))
  if (ours !== theirs) {
    throw new Error(
      `${short}'s production dependencies differ from the checkout's (${theirs} vs ${ours}): ` +
        'its image cannot take our node_modules; pick another PREVIOUS_COMMIT'
    )
  }
  const images = appImages(repo, {
    ENGINE_SOURCE: tree,
    ENGINE_TAG: `${ENGINE_REPOSITORY}:${short}`,
    APP_IMAGES: join(dir, 'images'),
  })
  return {
    name: `previous (${short})`,
    chart: join(tree, 'deploy', 'helm', 'metacontroller-ts'),
    imageArchive: join(images, 'engine.tar'),
    imageTag: short,
    crds: crdFiles(tree),
  }
}

/** The checkout's chart and engine image (tagged with the chart's appVersion, its default). */
export function currentRelease(repo: string): EngineRelease {
  const images = appImages(repo, {})
  return {
    name: 'current',
    chart: join(repo, 'deploy', 'helm', 'metacontroller-ts'),
    imageArchive: join(images, 'engine.tar'),
    imageTag: undefined,
    crds: crdFiles(repo),
  }
}
