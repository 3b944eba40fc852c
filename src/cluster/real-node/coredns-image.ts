/**
 * Where tools/coredns/build.sh caches CoreDNS and its image: a directory named by the version and
 * a hash of the wrapper module's files, computed here the same way, so a changed plugin set is
 * never served from an older build.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** CoreDNS release (keep in step with tools/coredns/build.sh and go.mod). */
export const COREDNS_VERSION = 'v1.15.0'
/** The image tools/coredns/build.sh writes into `coredns.tar`. */
export const COREDNS_IMAGE = 'metactl.local/coredns:v1.15.0'
/** The image archive's file name in {@link defaultCorednsDir}. */
export const COREDNS_ARCHIVE = 'coredns.tar'

/** The files build.sh hashes into its cache key, in its order. */
const KEY_FILES = ['main.go', 'go.mod', 'go.sum']

/** The package's tools/coredns (`src/cluster/real-node` and `dist/cluster/real-node` alike). */
export function packagedCorednsModule(): string {
  return fileURLToPath(new URL('../../../tools/coredns/', import.meta.url))
}

/**
 * The cache key of build.sh: the first 12 hex digits of the SHA-256 of main.go, go.mod and go.sum
 * concatenated (`cat main.go go.mod go.sum | sha256sum`).
 */
export function corednsCacheKey(moduleDir: string = packagedCorednsModule()): string {
  const hash = createHash('sha256')
  for (const file of KEY_FILES) hash.update(readFileSync(join(moduleDir, file)))
  return hash.digest('hex').slice(0, 12)
}

/**
 * The directory tools/coredns/build.sh writes `coredns` and {@link COREDNS_ARCHIVE} to by default
 * (`$METACTL_COREDNS_DIR` overrides it, as `COREDNS_DIR` does the script's).
 */
export function defaultCorednsDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['METACTL_COREDNS_DIR']
  if (explicit !== undefined) return explicit
  let key: string
  try {
    key = corednsCacheKey()
  } catch {
    // No tools/coredns beside this code: the image cannot be found, which the caller reports.
    key = 'unknown'
  }
  return join(
    env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'),
    'metacontroller-ts',
    'controlplane',
    `coredns-${COREDNS_VERSION}-${key}`
  )
}
