/**
 * Hook bodies fit to log: the values of every Secret in them replaced, keys kept.
 *
 * @module
 */

/** What a redacted value reads as. */
export const REDACTED = '<redacted>'

/** Annotations that hold a copy of an object's content (a Secret's data with it). */
const CONTENT_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  'metacontroller.k8s.io/last-applied-configuration',
]

function isSecret(value: Record<string, unknown>): boolean {
  return value['kind'] === 'Secret' && value['apiVersion'] === 'v1'
}

function redactValues(map: unknown): unknown {
  if (map === null || typeof map !== 'object') return map
  return Object.fromEntries(Object.keys(map).map((key) => [key, REDACTED]))
}

function redactSecret(secret: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...secret }
  for (const field of ['data', 'stringData'])
    if (field in out) out[field] = redactValues(out[field])
  const metadata = out['metadata'] as { annotations?: Record<string, string> } | undefined
  const annotations = metadata?.annotations
  if (annotations !== undefined) {
    const kept = { ...annotations }
    for (const key of CONTENT_ANNOTATIONS) if (key in kept) kept[key] = REDACTED
    out['metadata'] = { ...metadata, annotations: kept }
  }
  return out
}

/**
 * A copy of `body` in which every Secret (`v1`, any depth: children, related objects, the parent)
 * has the values of `data` and `stringData`, and the annotations that copy them, replaced by
 * {@link REDACTED}; everything else is as it was.
 */
export function redactSecrets(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(redactSecrets)
  if (body === null || typeof body !== 'object') return body
  const object = body as Record<string, unknown>
  const walked = Object.fromEntries(
    Object.entries(object).map(([key, value]) => [key, redactSecrets(value)])
  )
  return isSecret(object) ? redactSecret(walked) : walked
}
