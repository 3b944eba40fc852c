/**
 * The objects a CompositeController or DecoratorController serves, for
 * `metactl sync --controller NAME`: its parent (or target) resources, listed in every namespace
 * and filtered by its selectors as the engine filters them.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import type { LabelSelector } from '../../core/label-selector.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import type { ResourceInfo, ResourceMap } from '../../kube/resource-map.js'
import { COMPOSITE_CONTROLLERS, DECORATOR_CONTROLLERS } from '../../kube/well-known-resources.js'
import { CliError } from '../cli-error.js'

/** One resource a controller serves, with the selectors its objects must match. */
interface ServedResource {
  readonly apiVersion: string
  readonly resource: string
  readonly labelSelector?: LabelSelector
  readonly annotationSelector?: LabelSelector
}

/** An object to sync and how to address it. */
export interface ServedObject {
  readonly info: ResourceInfo
  readonly object: KubeObject
}

const KINDS = {
  compositecontroller: COMPOSITE_CONTROLLERS,
  decoratorcontroller: DECORATOR_CONTROLLERS,
} as const

function servedResources(controller: KubeObject): ServedResource[] {
  const spec = (controller['spec'] ?? {}) as {
    parentResource?: ServedResource
    resources?: ServedResource[]
  }
  if (controller.kind === 'CompositeController') {
    return spec.parentResource === undefined ? [] : [spec.parentResource]
  }
  return spec.resources ?? []
}

/** Reads the controller `text` names: `NAME`, `compositecontroller/NAME` or `decoratorcontroller/NAME`. */
async function readController(client: DynamicClient, text: string): Promise<KubeObject> {
  const slash = text.indexOf('/')
  const kind = slash < 0 ? undefined : text.slice(0, slash).toLowerCase().replace(/s$/, '')
  const name = slash < 0 ? text : text.slice(slash + 1)
  if (kind !== undefined && !(kind in KINDS)) {
    throw new CliError(
      `--controller: "${text}" names neither a compositecontroller nor a decoratorcontroller`
    )
  }
  const kinds =
    kind === undefined
      ? (['compositecontroller', 'decoratorcontroller'] as const)
      : [kind as keyof typeof KINDS]
  const found: KubeObject[] = []
  for (const candidate of kinds) {
    try {
      const object = await client.get(KINDS[candidate], name)
      found.push({
        ...object,
        kind: candidate === 'compositecontroller' ? 'CompositeController' : 'DecoratorController',
      })
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
    }
  }
  if (found.length > 1) {
    throw new CliError(
      `--controller: both a CompositeController and a DecoratorController are named ${name}; ` +
        `say compositecontroller/${name} or decoratorcontroller/${name}`
    )
  }
  const [controller] = found
  if (controller === undefined) {
    throw new CliError(`--controller: no CompositeController or DecoratorController named ${name}`)
  }
  return controller
}

/** Every object the controller `text` names serves, in every namespace. */
export async function controllerParents(
  client: DynamicClient,
  map: ResourceMap,
  text: string
): Promise<ServedObject[]> {
  const controller = await readController(client, text)
  const objects: ServedObject[] = []
  for (const served of servedResources(controller)) {
    const info = map.lookupResource(served.apiVersion, served.resource)
    if (info === undefined) {
      throw new CliError(
        `${controller.kind} ${controller.metadata.name ?? ''} serves ${served.resource} (${served.apiVersion}), which the server does not serve`
      )
    }
    const labels = compileLabelSelector(served.labelSelector)
    const annotations = compileLabelSelector(served.annotationSelector)
    const list = await client.list(info.ref)
    for (const object of list.items) {
      if (labels(object.metadata.labels ?? {}) && annotations(object.metadata.annotations ?? {})) {
        objects.push({ info, object: { ...object, apiVersion: info.apiVersion, kind: info.kind } })
      }
    }
  }
  return objects
}
