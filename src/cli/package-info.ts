/**
 * The package's own name and version, read from its package.json so that `--version` cannot
 * drift from what npm installed.
 *
 * @module
 */
import { readFileSync } from 'node:fs'

/** What `metactl` reports about itself. */
export interface PackageInfo {
  readonly name: string
  readonly version: string
  /** The Node.js range the package supports (`engines.node`). */
  readonly nodeRange: string
}

let cached: PackageInfo | undefined

/** Reads the package's name, version and Node range (`src/cli` and `dist/cli` are both two levels down). */
export function packageInfo(): PackageInfo {
  if (cached !== undefined) return cached
  const url = new URL('../../package.json', import.meta.url)
  const json = JSON.parse(readFileSync(url, 'utf8')) as {
    name?: string
    version?: string
    engines?: { node?: string }
  }
  cached = {
    name: json.name ?? 'metacontroller-ts',
    version: json.version ?? '0.0.0',
    nodeRange: json.engines?.node ?? '',
  }
  return cached
}
