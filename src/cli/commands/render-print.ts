/**
 * What `metactl render` prints for each controller kind: a YAML stream of the children as the
 * engine leaves them, with the plan and the hook's answer as comments, or one JSON object.
 *
 * @module
 */
import { stringify } from 'yaml'
import type { CompositeRender } from '../../offline/sync-composite-offline.js'
import type { DecoratorRender } from '../../offline/sync-decorator-offline.js'
import { planComments, planJson } from './render-plan.js'
import { rolloutComments, rolloutJson } from './render-rollout.js'

/** A value as YAML lines. */
export function yamlLines(value: unknown): string[] {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd().split('\n')
}

function commented(value: unknown): string[] {
  return yamlLines(value).map((line) => `#   ${line}`)
}

/** The YAML output: a valid YAML stream, the plan and status in comments after the children. */
export function formatCompositeText(result: CompositeRender): string[] {
  const lines: string[] = []
  for (const child of result.written) lines.push('---', ...yamlLines(child))
  if (result.written.length === 0) lines.push('# No desired children.')
  const { response } = result
  if (result.rollout !== undefined) lines.push(...rolloutComments(result.rollout))
  lines.push(...planComments(result.printed))
  const status = response.status
  if (status === null || Object.keys(status).length === 0) {
    lines.push(`# Status: ${status === null ? 'null' : '{}'}`)
  } else {
    lines.push('# Status:', ...commented(status))
  }
  lines.push(`# resyncAfterSeconds: ${response.resyncAfterMs / 1000}`)
  lines.push(`# finalized: ${String(response.finalized)}`)
  return lines
}

/** The JSON output: one object. */
export function formatCompositeJson(result: CompositeRender): string {
  const { response } = result
  return JSON.stringify(
    {
      desired: result.desired,
      plan: planJson(result.printed),
      ...(result.rollout === undefined ? {} : { rollout: rolloutJson(result.rollout) }),
      status: response.status,
      resyncAfterSeconds: response.resyncAfterMs / 1000,
      finalized: response.finalized,
    },
    null,
    2
  )
}

function changeLines(title: string, changes: Readonly<Record<string, string | null>>): string[] {
  const entries = Object.entries(changes)
  if (entries.length === 0) return []
  return [
    `# ${title}:`,
    ...entries.map(([key, value]) =>
      value === null ? `#   - ${key}` : `#   ${key}: ${JSON.stringify(value)}`
    ),
  ]
}

/** The YAML output: the desired attachments, then the plan and the target's changes. */
export function formatDecoratorText(result: DecoratorRender): string[] {
  const lines: string[] = []
  for (const attachment of result.written) lines.push('---', ...yamlLines(attachment))
  if (result.written.length === 0) lines.push('# No desired attachments.')
  const { response } = result
  lines.push(...planComments(result.printed))
  lines.push(`# Target: ${result.targetChanged ? 'updated' : 'unchanged'}`)
  lines.push(...changeLines('Labels', response.labels))
  lines.push(...changeLines('Annotations', response.annotations))
  if (response.status === null) lines.push('# Status: unchanged (null)')
  else lines.push('# Status:', ...commented(response.status))
  lines.push(`# resyncAfterSeconds: ${response.resyncAfterMs / 1000}`)
  lines.push(`# finalized: ${String(response.finalized)}`)
  return lines
}

/** The JSON output: one object. */
export function formatDecoratorJson(result: DecoratorRender): string {
  const { response } = result
  return JSON.stringify(
    {
      desired: result.desired,
      plan: planJson(result.printed),
      target: result.target,
      labels: response.labels,
      annotations: response.annotations,
      status: response.status,
      resyncAfterSeconds: response.resyncAfterMs / 1000,
      finalized: response.finalized,
    },
    null,
    2
  )
}
