/**
 * What `metactl dev` reads from a project: the CRDs and CompositeControllers among the YAML files
 * directly in its manifest directory (`deploy/` by default; subdirectories such as
 * `deploy/samples/` and `kustomization.yaml` are left alone).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { KubeObject } from '../../core/kube-object.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { manifestFilesIn } from '../../cluster/metacontroller-crds.js'
import { CliError } from '../cli-error.js'

/** The manifests `metactl dev` applies and serves. */
export interface ProjectManifests {
  readonly crds: readonly KubeObject[]
  readonly controllers: readonly KubeObject[]
}

/** Reads the CRDs and CompositeControllers of `dir`. */
export function readProjectManifests(dir: string, projectDir: string): ProjectManifests {
  const shown = relative(projectDir, dir) || '.'
  if (!existsSync(dir)) {
    throw new CliError(
      `no ${shown}/ directory in ${projectDir}: metactl dev reads the CRDs and CompositeControllers ` +
        'there (create a project with metactl init, or pass --manifests DIR)'
    )
  }
  const objects = manifestFilesIn(dir).flatMap((file) => {
    try {
      return parseManifests(readFileSync(file, 'utf8'), relative(projectDir, file))
    } catch (error) {
      throw new CliError(error instanceof Error ? error.message : String(error))
    }
  })
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition')
  const controllers = objects.filter((o) => o.kind === 'CompositeController')
  if (controllers.length === 0) {
    throw new CliError(`no CompositeController in ${shown}/*.yaml: nothing to run`)
  }
  return { crds, controllers }
}
