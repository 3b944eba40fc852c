/**
 * Where `metactl rbac` finds controllers: YAML files and directories (`-f`), or the
 * CompositeControllers and DecoratorControllers of a cluster.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import type { KubeObject } from '../../core/kube-object.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { isDirectory, manifestFilesIn } from '../../cluster/metacontroller-crds.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import { COMPOSITE_CONTROLLERS, DECORATOR_CONTROLLERS } from '../../kube/well-known-resources.js'
import { CliError } from '../cli-error.js'
import type { ControllerSource } from './rbac-manifest.js'
import { messageOf } from '../../core/message-of.js'

function readManifestFile(file: string): KubeObject[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new CliError(
      `${file}: ${code === 'ENOENT' ? 'no such file or directory' : String(error)}`
    )
  }
  try {
    return parseManifests(text, file)
  } catch (error) {
    throw new CliError(messageOf(error))
  }
}

/**
 * Reads every object of `paths`: a file, or the YAML files directly in a directory
 * (`kustomization.yaml` left out), in the order given.
 */
export function sourcesFromFiles(paths: readonly string[]): ControllerSource[] {
  return paths.flatMap((path) => {
    const files = isDirectory(path) ? manifestFilesIn(path) : [path]
    return files.flatMap((file) =>
      readManifestFile(file).map((object) => ({ object, origin: file }))
    )
  })
}

/** Lists the cluster's CompositeControllers, then its DecoratorControllers, each by name. */
export async function sourcesFromCluster(client: DynamicClient): Promise<ControllerSource[]> {
  const sources: ControllerSource[] = []
  for (const [ref, kind] of [
    [COMPOSITE_CONTROLLERS, 'CompositeController'],
    [DECORATOR_CONTROLLERS, 'DecoratorController'],
  ] as const) {
    const list = await client.list(ref)
    const items = [...list.items].sort((a, b) =>
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')
    )
    // A list's items carry no apiVersion and kind of their own.
    for (const item of items) {
      const object = { ...item, apiVersion: 'metacontroller.k8s.io/v1alpha1', kind }
      sources.push({ object, origin: `the cluster's ${ref.resource}` })
    }
  }
  return sources
}
