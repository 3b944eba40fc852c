/**
 * A client for any resource, addressed by group, version and plural name.
 *
 * @remarks
 * Objects go in and out as plain JSON ({@link KubeObject}); nothing is typed per kind, so a CRD
 * created a second ago is as usable as a Pod.
 *
 * @module
 */
import type { KubeList, KubeObject } from '../core/kube-object.js'
import type { KubeStream, KubeTransport, QueryValue } from './kube-transport.js'

/** Identifies a resource collection: `group/version/resource`, and whether it is namespaced. */
export interface ResourceRef {
  /** API group; `''` for the core group. */
  readonly group: string
  readonly version: string
  /** Plural resource name, e.g. `pods`. */
  readonly resource: string
  readonly namespaced: boolean
}

/** Formats a resource reference as `resource.version.group` (`pods.v1`), for messages. */
export function formatResourceRef(ref: ResourceRef): string {
  return ref.group === ''
    ? `${ref.resource}.${ref.version}`
    : `${ref.resource}.${ref.version}.${ref.group}`
}

/** Builds the collection path of a resource, in a namespace when it is namespaced. */
export function resourcePath(ref: ResourceRef, namespace?: string, name?: string): string {
  const prefix = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`
  const ns =
    ref.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : ''
  const item = name === undefined ? '' : `/${encodeURIComponent(name)}`
  return `${prefix}${ns}/${ref.resource}${item}`
}

/** Options shared by every call. */
export interface CallOptions {
  readonly signal?: AbortSignal
  readonly timeoutMs?: number
}

/** Options of calls on a single object. */
export interface ObjectCallOptions extends CallOptions {
  readonly namespace?: string
}

/** Options of writes. */
export interface WriteOptions extends ObjectCallOptions {
  readonly fieldManager?: string
  readonly dryRun?: boolean
}

/** Options of list and watch calls. */
export interface ListOptions extends CallOptions {
  readonly namespace?: string
  readonly labelSelector?: string
  readonly fieldSelector?: string
  /**
   * Only objects whose shard hash falls in the ranges (`shardRange(object.metadata.uid, '0x…',
   * '0x…') || …`; API servers with the `ShardedListAndWatch` feature gate, Kubernetes 1.36+;
   * others ignore it).
   */
  readonly shardSelector?: string
}

/** Options of one list page. */
export interface ListPageOptions extends ListOptions {
  readonly limit?: number
  readonly continue?: string
  readonly resourceVersion?: string
  /** Told the byte length of the page's response body (for metrics). */
  readonly onResponseBytes?: (bytes: number) => void
}

/** Options of a watch request. */
export interface WatchOptions extends ListOptions {
  readonly resourceVersion?: string
  readonly allowWatchBookmarks?: boolean
  readonly timeoutSeconds?: number
  readonly sendInitialEvents?: boolean
  readonly resourceVersionMatch?: string
}

/** The patch formats the API server accepts. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply'

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
}

/** Options of a patch. */
export interface PatchOptions extends WriteOptions {
  readonly type: PatchType
  /** Server-side apply only: take ownership of fields other managers own. */
  readonly force?: boolean
  /** Patches a subresource such as `status` instead of the main resource. */
  readonly subresource?: string
}

/** Options of a delete. */
export interface DeleteOptions extends ObjectCallOptions {
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan'
  /** Deletes only if the object still has this UID / resourceVersion. */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  readonly gracePeriodSeconds?: number
  readonly dryRun?: boolean
}

/** Reads and writes objects of any resource through one transport. */
export class DynamicClient {
  /** The transport requests go through. */
  readonly transport: KubeTransport

  constructor(transport: KubeTransport) {
    this.transport = transport
  }

  /** Reads one object. */
  get<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    options: ObjectCallOptions = {}
  ): Promise<T> {
    return this.transport.requestJson<T>({
      method: 'GET',
      path: resourcePath(ref, options.namespace, name),
      ...callFields(options),
    })
  }

  /**
   * Reads one page of a list.
   *
   * @remarks
   * The API server leaves `apiVersion` and `kind` out of list items; they are filled in from the
   * list (`ConfigMapList` → `ConfigMap`), as client-go's dynamic client does, so that a listed
   * object looks the same as a watched or fetched one.
   */
  async listPage<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    options: ListPageOptions = {}
  ): Promise<KubeList<T>> {
    const list = await this.transport.requestJson<KubeList<T>>({
      method: 'GET',
      path: resourcePath(ref, options.namespace),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        shardSelector: options.shardSelector,
        limit: options.limit,
        continue: options.continue,
        resourceVersion: options.resourceVersion,
      },
      ...callFields(options),
      ...(options.onResponseBytes === undefined
        ? {}
        : { onResponseBytes: options.onResponseBytes }),
    })
    const kind = list.kind.endsWith('List') ? list.kind.slice(0, -4) : list.kind
    for (const item of list.items) {
      const raw = item as { kind?: unknown; apiVersion?: unknown }
      if (typeof raw.kind !== 'string') item.kind = kind
      if (typeof raw.apiVersion !== 'string') item.apiVersion = list.apiVersion
    }
    return list
  }

  /** Lists every object, following `continue` tokens page by page (500 per page). */
  async list<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    options: ListOptions & { readonly pageSize?: number } = {}
  ): Promise<KubeList<T>> {
    const items: T[] = []
    let token: string | undefined
    for (;;) {
      const page: KubeList<T> = await this.listPage<T>(ref, {
        ...options,
        limit: options.pageSize ?? 500,
        ...(token === undefined ? {} : { continue: token }),
      })
      items.push(...page.items)
      token = page.metadata.continue
      if (token === undefined || token === '') {
        return { ...page, metadata: { ...page.metadata, continue: '' }, items }
      }
    }
  }

  /** Creates an object in its `metadata.namespace` (or `options.namespace`). */
  create<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    object: KubeObject,
    options: WriteOptions = {}
  ): Promise<T> {
    return this.transport.requestJson<T>({
      method: 'POST',
      path: resourcePath(ref, options.namespace ?? object.metadata.namespace),
      body: object,
      query: writeQuery(options),
      ...callFields(options),
    })
  }

  /** Replaces an object; `metadata.resourceVersion` makes it conditional. */
  update<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    object: KubeObject,
    options: WriteOptions & { readonly subresource?: string } = {}
  ): Promise<T> {
    const name = object.metadata.name ?? ''
    const sub = options.subresource === undefined ? '' : `/${options.subresource}`
    return this.transport.requestJson<T>({
      method: 'PUT',
      path: resourcePath(ref, options.namespace ?? object.metadata.namespace, name) + sub,
      body: object,
      query: writeQuery(options),
      ...callFields(options),
    })
  }

  /** Replaces the status subresource of an object. */
  updateStatus<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    object: KubeObject,
    options: WriteOptions = {}
  ): Promise<T> {
    return this.update<T>(ref, object, { ...options, subresource: 'status' })
  }

  /** Patches an object with a merge, JSON, strategic-merge or server-side-apply patch. */
  patch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    patch: unknown,
    options: PatchOptions
  ): Promise<T> {
    const sub = options.subresource === undefined ? '' : `/${options.subresource}`
    const query: Record<string, QueryValue> = writeQuery(options)
    if (options.type === 'apply') {
      query['fieldManager'] = options.fieldManager ?? 'metacontroller-ts'
      if (options.force === true) query['force'] = true
    }
    return this.transport.requestJson<T>({
      method: 'PATCH',
      path: resourcePath(ref, options.namespace, name) + sub,
      body: patch,
      contentType: PATCH_CONTENT_TYPES[options.type],
      query,
      ...callFields(options),
    })
  }

  /** Deletes an object; resolves with what the server returned (the object or a Status). */
  delete(ref: ResourceRef, name: string, options: DeleteOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' }
    if (options.propagationPolicy !== undefined)
      body['propagationPolicy'] = options.propagationPolicy
    if (options.preconditions !== undefined) body['preconditions'] = options.preconditions
    if (options.gracePeriodSeconds !== undefined)
      body['gracePeriodSeconds'] = options.gracePeriodSeconds
    return this.transport.requestJson({
      method: 'DELETE',
      path: resourcePath(ref, options.namespace, name),
      body,
      query: { dryRun: options.dryRun === true ? 'All' : undefined },
      ...callFields(options),
    })
  }

  /** Opens a watch stream; lines are JSON watch events. The caller owns the stream. */
  watch(ref: ResourceRef, options: WatchOptions = {}): Promise<KubeStream> {
    return this.transport.stream({
      method: 'GET',
      path: resourcePath(ref, options.namespace),
      query: {
        watch: true,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        shardSelector: options.shardSelector,
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: options.allowWatchBookmarks,
        timeoutSeconds: options.timeoutSeconds,
        sendInitialEvents: options.sendInitialEvents,
        resourceVersionMatch: options.resourceVersionMatch,
      },
      timeoutMs: 0,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
  }
}

function callFields(options: CallOptions): { signal?: AbortSignal; timeoutMs?: number } {
  const out: { signal?: AbortSignal; timeoutMs?: number } = {}
  if (options.signal !== undefined) out.signal = options.signal
  if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs
  return out
}

function writeQuery(options: WriteOptions): Record<string, QueryValue> {
  return {
    fieldManager: options.fieldManager,
    dryRun: options.dryRun === true ? 'All' : undefined,
  }
}
