import { readFileSync } from 'node:fs'
import { parseAllDocuments } from 'yaml'
import { isJsonObject } from '../core/kube-object.js'
import type { KubeObject } from '../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../kube/dynamic-client.js'
import { isDirectory, manifestFilesIn } from './metacontroller-crds.js'
import { waitFor } from '../runtime/clock/wait-for.js'

/** The CustomResourceDefinition resource. */
export const CRD_RESOURCE: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
}

/**
 * A CRD to install: a YAML file path (one or more documents), a directory of YAML files (all but
 * `kustomization.yaml`), or an object.
 */
export type CrdSource = string | KubeObject

/** Reads every Kubernetes object from a multi-document YAML file, skipping empty documents. */
export function readManifestFile(path: string): KubeObject[] {
  const text = readFileSync(path, 'utf8')
  return parseManifests(text, path)
}

/** Parses multi-document YAML into objects; `origin` names the source in errors. */
export function parseManifests(text: string, origin: string): KubeObject[] {
  const objects: KubeObject[] = []
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      throw new Error(`${origin}: invalid YAML: ${doc.errors[0]?.message ?? 'unknown error'}`)
    }
    const value: unknown = doc.toJS()
    if (value === null || value === undefined) continue
    if (
      !isJsonObject(value) ||
      typeof value['apiVersion'] !== 'string' ||
      typeof value['kind'] !== 'string' ||
      !isJsonObject(value['metadata'])
    ) {
      throw new Error(
        `${origin}: a document is not a Kubernetes object (apiVersion, kind, metadata)`
      )
    }
    objects.push(value as KubeObject)
  }
  return objects
}

function isEstablished(crd: KubeObject): boolean {
  const status = crd['status']
  if (!isJsonObject(status) || !Array.isArray(status['conditions'])) return false
  return (status['conditions'] as unknown[]).some(
    (c) => isJsonObject(c) && c['type'] === 'Established' && c['status'] === 'True'
  )
}

// Test files run in parallel and may install the same CRDs at once: a lost race (409) is retried
// against the fresh object.
async function applyCrd(client: DynamicClient, crd: KubeObject): Promise<void> {
  const name = crd.metadata.name ?? ''
  for (let attempt = 1; ; attempt++) {
    try {
      const existing = await client.get(CRD_RESOURCE, name)
      const updated = {
        ...crd,
        metadata: { ...crd.metadata, resourceVersion: existing.metadata.resourceVersion ?? '' },
      }
      await client.update(CRD_RESOURCE, updated)
      return
    } catch (error) {
      if (error instanceof NotFoundError) {
        try {
          await client.create(CRD_RESOURCE, crd)
          return
        } catch (createError) {
          if (!(createError instanceof AlreadyExistsError) || attempt >= 5) throw createError
          continue
        }
      }
      if (!(error instanceof ConflictError) || attempt >= 5) throw error
    }
  }
}

/**
 * Creates or updates CustomResourceDefinitions and waits until each is Established.
 *
 * @remarks
 * **Guarantees** On return, custom objects of every installed CRD can be created: creating one
 * before `Established` is a known source of flaky 404s.
 */
export async function installCrds(
  client: DynamicClient,
  sources: readonly CrdSource[],
  options: { readonly timeoutMs?: number } = {}
): Promise<KubeObject[]> {
  const crds = sources.flatMap((source) => {
    if (typeof source !== 'string') return [source]
    const files = isDirectory(source) ? manifestFilesIn(source) : [source]
    return files.flatMap(readManifestFile)
  })
  for (const crd of crds) {
    if (crd.kind !== 'CustomResourceDefinition') {
      throw new Error(`installCrds: ${crd.kind} ${crd.metadata.name ?? ''} is not a CRD`)
    }
    await applyCrd(client, crd)
  }
  const timeoutMs = options.timeoutMs ?? 30_000
  for (const crd of crds) {
    const name = crd.metadata.name ?? ''
    await waitFor(
      async () => {
        const current = await client.get(CRD_RESOURCE, name)
        return isEstablished(current) ? current : undefined
      },
      { timeoutMs, description: `CRD ${name} to become Established` }
    )
  }
  return crds
}
