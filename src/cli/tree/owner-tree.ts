/**
 * The ownership tree of an object: its children (objects whose `ownerReferences` name it), their
 * children, and so on; and how to print it like `kubectl tree`.
 *
 * @module
 */
import { isJsonObject } from '../../core/kube-object.js'
import type { KubeObject } from '../../core/kube-object.js'

/** An object and the objects it owns. */
export interface OwnerTreeNode {
  readonly object: KubeObject
  readonly children: readonly OwnerTreeNode[]
}

/** What the READY and STATUS columns show for an object. */
export interface StatusSummary {
  /** `True`, `False`, `Unknown`, or `-` when the object has no readiness. */
  readonly ready: string
  readonly status: string
}

function sortKey(object: KubeObject): string {
  return `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`
}

/**
 * Builds the tree below `root` from a set of objects, by owner UID. An object owned by two parents
 * in the tree appears under both; a cycle (which the API server allows) is cut at the repeat.
 */
export function buildOwnerTree(root: KubeObject, objects: readonly KubeObject[]): OwnerTreeNode {
  const byOwner = new Map<string, KubeObject[]>()
  for (const object of objects) {
    for (const ref of object.metadata.ownerReferences ?? []) {
      const list = byOwner.get(ref.uid) ?? []
      list.push(object)
      byOwner.set(ref.uid, list)
    }
  }
  const grow = (object: KubeObject, path: ReadonlySet<string>): OwnerTreeNode => {
    const uid = object.metadata.uid ?? ''
    const seen = new Set(path).add(uid)
    const owned = (byOwner.get(uid) ?? [])
      .filter((child) => !seen.has(child.metadata.uid ?? ''))
      .sort((a, b) => sortKey(a).localeCompare(sortKey(b)))
    return { object, children: owned.map((child) => grow(child, seen)) }
  }
  return grow(root, new Set())
}

function conditionOf(object: KubeObject, type: string): Record<string, unknown> | undefined {
  const status = object['status']
  if (!isJsonObject(status) || !Array.isArray(status['conditions'])) return undefined
  const found: unknown = (status['conditions'] as unknown[]).find(
    (c) => isJsonObject(c) && c['type'] === type
  )
  return isJsonObject(found) ? found : undefined
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Summarizes an object's state in two columns: its `Ready` condition (else `Available`, as
 * Deployments have), and a reason, phase or address.
 */
export function summarizeStatus(object: KubeObject): StatusSummary {
  const status = isJsonObject(object['status']) ? object['status'] : {}
  const spec = isJsonObject(object['spec']) ? object['spec'] : {}
  const condition = conditionOf(object, 'Ready') ?? conditionOf(object, 'Available')
  const phase = text(status['phase'])
  if (object.metadata.deletionTimestamp !== undefined) {
    return { ready: text(condition?.['status']) ?? '-', status: 'Terminating' }
  }
  if (condition !== undefined) {
    const ready = text(condition['status']) ?? 'Unknown'
    const reason = text(condition['reason']) ?? (ready === 'True' ? 'Ready' : '')
    return {
      ready,
      status: phase !== undefined && phase !== reason ? `${phase} ${reason}`.trim() : reason,
    }
  }
  if (phase !== undefined) return { ready: '-', status: phase }
  // Many controllers (and the metactl init scaffold) report readiness as a boolean.
  if (typeof status['ready'] === 'boolean') {
    return { ready: status['ready'] ? 'True' : 'False', status: '' }
  }
  if (object.kind === 'Service' && object.apiVersion === 'v1') {
    const ip = text(spec['clusterIP'])
    return {
      ready: '-',
      status: `${text(spec['type']) ?? 'ClusterIP'}${ip === undefined ? '' : ` ${ip}`}`,
    }
  }
  return { ready: '-', status: '' }
}

/** An age as `kubectl get` prints it: `42s`, `5m`, `3h`, `12d`. */
export function formatAge(timestamp: string | undefined, now: number): string {
  if (timestamp === undefined) return '-'
  const seconds = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000))
  if (Number.isNaN(seconds)) return '-'
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 120) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours}h`
  return `${Math.floor(hours / 24)}d`
}

/**
 * Prints a tree as aligned columns: NAMESPACE, NAME (with branches), READY, STATUS, AGE. The
 * branch characters are single UTF-16 units, so `length` is the printed width.
 */
export function formatOwnerTree(root: OwnerTreeNode, now: number): string[] {
  const rows: string[][] = [['NAMESPACE', 'NAME', 'READY', 'STATUS', 'AGE']]
  const walk = (node: OwnerTreeNode, prefix: string, branch: string): void => {
    const { object } = node
    const summary = summarizeStatus(object)
    rows.push([
      object.metadata.namespace ?? '',
      `${prefix}${branch}${object.kind}/${object.metadata.name ?? ''}`,
      summary.ready,
      summary.status,
      formatAge(object.metadata.creationTimestamp, now),
    ])
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1
      const indent = branch === '' ? '' : branch === '└─' ? '  ' : '│ '
      walk(child, `${prefix}${indent}`, last ? '└─' : '├─')
    })
  }
  walk(root, '', '')
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  return rows.map((row) =>
    row
      .map((cell, column) =>
        column === row.length - 1 ? cell : cell + ' '.repeat((widths[column] ?? 0) - cell.length)
      )
      .join('  ')
      .trimEnd()
  )
}
