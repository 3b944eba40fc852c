// The package as a user gets it, from this checkout: its files copied (git's view: tracked and
// untracked-but-not-ignored) with this checkout's node_modules linked in, then `npm pack`, whose
// `prepare` builds the copy's dist/, never the one other tests are importing.
import { execFile } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)

/** What {@link packCheckout} made. */
export interface PackedCheckout {
  /** The copy of the checkout (a checkout as a user clones it, dist/ built). */
  readonly checkout: string
  /** The `npm pack` tarball. */
  readonly tarball: string
  /** Paths inside the tarball. */
  readonly files: readonly string[]
  readonly sizeBytes: number
}

/** Copies this checkout to `copy` and packs it into `destination`. */
export async function packCheckout(copy: string, destination: string): Promise<PackedCheckout> {
  const repo = resolve('.')
  const { stdout: listed } = await exec(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
    { cwd: repo, maxBuffer: 64 * 1024 * 1024 }
  )
  for (const file of listed.split('\0').filter((f) => f !== '' && existsSync(join(repo, f)))) {
    const source = join(repo, file)
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    if (lstatSync(source).isSymbolicLink()) symlinkSync(readlinkSync(source), join(copy, file))
    else copyFileSync(source, join(copy, file))
  }
  symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'))
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: copy,
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  })
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[]
  if (packed === undefined) throw new Error('npm pack wrote no tarball')
  const tarball = join(destination, packed.filename)
  return {
    checkout: copy,
    tarball,
    files: packed.files.map((f) => f.path),
    sizeBytes: statSync(tarball).size,
  }
}
