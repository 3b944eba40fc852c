/**
 * What `metactl dev` reads from a project: the CRDs, CompositeControllers and DecoratorControllers
 * among the YAML files directly in its manifest directory (`deploy/` by default; subdirectories
 * such as `deploy/samples/` and `kustomization.yaml` are left alone).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { KubeObject } from '../../core/kube-object.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { manifestFilesIn } from '../../cluster/metacontroller-crds.js'
import { CliError } from '../cli-error.js'
import { messageOf } from '../../core/message-of.js'

/** The manifests `metactl dev` applies and serves. */
export interface ProjectManifests {
  readonly crds: readonly KubeObject[]
  readonly controllers: readonly KubeObject[]
  /** Every object of the directory (RBAC objects too: dev checks the rights they grant). */
  readonly objects: readonly KubeObject[]
  /** The file each object was read from, relative to the project (`deploy/controller.yaml`). */
  readonly origins: ReadonlyMap<KubeObject, string>
}

/** The controller kinds `metactl dev` runs. */
const CONTROLLER_KINDS = new Set(['CompositeController', 'DecoratorController'])

/**
 * Reads the CRDs and controllers of `dir`.
 *
 * @throws CliError for unreadable YAML, a nameless or twice-named controller, or no controller.
 */
export function readProjectManifests(dir: string, projectDir: string): ProjectManifests {
  const shown = relative(projectDir, dir) || '.'
  if (!existsSync(dir)) {
    throw new CliError(
      `no ${shown}/ directory in ${projectDir}: metactl dev reads the CRDs and controllers ` +
        'there (create a project with metactl init, or pass --manifests DIR)'
    )
  }
  const origins = new Map<KubeObject, string>()
  const objects = manifestFilesIn(dir).flatMap((file) => {
    const shownFile = relative(projectDir, file)
    try {
      const parsed = parseManifests(readFileSync(file, 'utf8'), shownFile)
      for (const object of parsed) origins.set(object, shownFile)
      return parsed
    } catch (error) {
      throw new CliError(messageOf(error))
    }
  })
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition')
  const controllers = objects.filter((o) => CONTROLLER_KINDS.has(o.kind))
  if (controllers.length === 0) {
    throw new CliError(
      `no CompositeController or DecoratorController in ${shown}/*.yaml: nothing to run`
    )
  }
  const names = new Set<string>()
  for (const controller of controllers) {
    const name = controller.metadata.name ?? ''
    if (name === '') throw new CliError(`${shown}/: a ${controller.kind} has no metadata.name`)
    // The engine runs one controller per name, and the hook module's exports are found by it.
    if (names.has(name)) throw new CliError(`${shown}/: two controllers are named ${name}`)
    names.add(name)
  }
  return { crds, controllers, objects, origins }
}
