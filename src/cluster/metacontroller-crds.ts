import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Lists the YAML manifests of a directory, sorted, leaving out `kustomization.yaml` (a Kustomize
 * file, not an object to apply).
 */
export function manifestFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name) && !/^kustomization\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(dir, name))
}

/** Tells whether a path names a directory (false when it does not exist). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * The Metacontroller CRD manifests shipped with this package (`deploy/crds/`), as absolute paths,
 * for `startControlPlane({ crds: [...metacontrollerCrdFiles(), 'my-crd.yaml'] })`.
 *
 * @remarks
 * Resolved from this module's own location (`src/testing/` and `dist/testing/` are both two levels
 * below the package root), so it works from a checkout and from `node_modules` alike.
 */
export function metacontrollerCrdFiles(): string[] {
  return manifestFilesIn(fileURLToPath(new URL('../../deploy/crds/', import.meta.url)))
}
