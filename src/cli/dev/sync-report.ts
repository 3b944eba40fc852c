/**
 * One line per sync for `metactl dev`: the parent, the children the hook asked for against the
 * ones observed (new `+`, gone `-`, kept `=`), and the status; repeated identical results (the
 * engine's resyncs) are printed once.
 *
 * @module
 */
import type { CompositeSyncRequest, CompositeSyncResponse } from '../../api/hook-model.js'
import type { KubeObject } from '../../core/kube-object.js'

function keyOf(object: KubeObject): string {
  return `${object.kind} ${object.metadata.name ?? '?'}`
}

function parentOf(request: CompositeSyncRequest): string {
  const { metadata } = request.parent
  const name =
    metadata.namespace === undefined
      ? (metadata.name ?? '')
      : `${metadata.namespace}/${metadata.name ?? ''}`
  return `${request.parent.kind} ${name}`
}

/** Describes what a sync asked for, compared with what was observed. */
export function describeSync(
  request: CompositeSyncRequest,
  response: CompositeSyncResponse
): string {
  const observed = new Set<string>()
  for (const objects of request.children.values())
    for (const child of objects.values()) observed.add(keyOf(child))
  const desired = new Set(response.children.map(keyOf))
  const added = [...desired].filter((k) => !observed.has(k)).map((k) => `+${k}`)
  const gone = [...observed].filter((k) => !desired.has(k)).map((k) => `-${k}`)
  const kept = [...desired].filter((k) => observed.has(k)).length
  const changes = [...added, ...gone, ...(kept > 0 ? [`=${kept} kept`] : [])]
  const status = response.status === null ? 'unchanged' : JSON.stringify(response.status)
  const verb = request.finalizing ? 'finalize' : 'sync'
  const done = request.finalizing ? ` finalized=${String(response.finalized)}` : ''
  return `${verb} ${parentOf(request)}: ${changes.join(', ') || 'no children'}; status ${status}${done}`
}

/** Prints each sync's line or error once per distinct result per parent. */
export class SyncReporter {
  readonly #last = new Map<string, string>()
  readonly #write: (line: string) => void
  readonly #now: () => Date

  constructor(write: (line: string) => void, now: () => Date = () => new Date()) {
    this.#write = write
    this.#now = now
  }

  /** Reports a finished sync. */
  synced(request: CompositeSyncRequest, response: CompositeSyncResponse): void {
    this.#print(parentOf(request), [describeSync(request, response)])
  }

  /** Reports a failed sync with the lines describing the error. */
  failed(request: CompositeSyncRequest, lines: readonly string[]): void {
    const [first = '', ...rest] = lines
    this.#print(parentOf(request), [`sync ${parentOf(request)} failed: ${first}`, ...rest])
  }

  /** Forgets what was printed, so that the syncs after a reload are all shown. */
  reset(): void {
    this.#last.clear()
  }

  #print(parent: string, lines: readonly string[]): void {
    const text = lines.join('\n')
    if (this.#last.get(parent) === text) return
    this.#last.set(parent, text)
    const time = this.#now().toISOString().slice(11, 19)
    const [first = '', ...rest] = lines
    this.#write(`${time} ${first}`)
    for (const line of rest) this.#write(`         ${line}`)
  }
}
