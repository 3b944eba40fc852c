/**
 * Optional kube-apiserver settings the local control plane exposes as options: feature gates and
 * an audit log (one JSON line per write request, with the caller's user agent).
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Feature gates to turn on or off, e.g. `{ ShardedListAndWatch: true }`. */
export type FeatureGates = Readonly<Record<string, boolean>>

/**
 * The audit policy the control plane uses: every write (create, update, patch, delete) at
 * `Metadata` level, once the response is complete; reads and Leases and Events are not logged,
 * so the log stays small under load.
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    resources:
      - group: coordination.k8s.io
        resources: [leases]
      - group: ''
        resources: [events]
      - group: events.k8s.io
        resources: [events]
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
`

/**
 * Parses `Name=true,Other=false` (kube-apiserver's `--feature-gates` syntax).
 *
 * @throws Error naming the bad entry.
 */
export function parseFeatureGates(text: string): FeatureGates {
  const gates: Record<string, boolean> = {}
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue
    const match = /^\s*([A-Za-z][A-Za-z0-9]*)\s*=\s*(true|false)\s*$/.exec(entry)
    if (match === null) throw new Error(`feature gate "${entry}" must be Name=true or Name=false`)
    gates[match[1] ?? ''] = match[2] === 'true'
  }
  return gates
}

/** The `--feature-gates` flag for gates (none for an empty set). */
export function featureGateFlags(gates: FeatureGates | undefined): string[] {
  const entries = Object.entries(gates ?? {})
  if (entries.length === 0) return []
  return [`--feature-gates=${entries.map(([name, on]) => `${name}=${String(on)}`).join(',')}`]
}

/**
 * The audit flags for a log at `logPath`; writes the policy ({@link AUDIT_POLICY}) into `dir`.
 * None when `logPath` is undefined.
 */
export function auditLogFlags(logPath: string | undefined, dir: string): string[] {
  if (logPath === undefined) return []
  const policy = join(dir, 'audit-policy.yaml')
  writeFileSync(policy, AUDIT_POLICY)
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${logPath}`,
    '--audit-log-format=json',
    // Written as requests complete: tests read the file while the server runs.
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
  ]
}
