// One fault of the in-cluster fault tests, run the same way each time: everything converged
// first, the parents kept changing, the fault injected (and healed) while they change, the load
// stopped, then the time until everything converged again, and the audit log of the window
// checked: one writer at a time, no child created or deleted (each parent keeps its children).
import assert from 'node:assert/strict'
import { doubleWrites, readEngineWrites, writerRuns, writesBetween } from './fault-audit.js'
import type { EngineWrite } from './fault-audit.js'
import type { ParentChurn } from './fault-load.js'
import { FAULT_NAMESPACE } from './fault-manifests.js'

/** What a fault reports when it returns. */
export interface FaultResult {
  /** When the fault was over (healed, restarted); default: when it was injected. */
  readonly healedAtMs?: number
  /** From the fault to another replica holding the Lease, when one took over. */
  readonly handoverMs?: number
  /** Anything else worth a figure (e.g. how long the API server was down). */
  readonly note?: string
}

/** The figures of one fault. */
export interface FaultFigures {
  readonly fault: string
  /** From injecting the fault to everything converged. */
  readonly convergedMs: number
  /** From the fault being over to everything converged. */
  readonly afterHealMs: number
  readonly handoverMs?: number
  readonly parentWrites: number
  readonly engineWrites: number
  readonly writers: string
  readonly note?: string
}

/** How {@link underLoad} runs. */
export interface LoadOptions {
  readonly churn: ParentChurn
  readonly auditLog: string
  /** One parent changed every this many ms (default 200). */
  readonly intervalMs?: number
  /** Budget to converge, before and after (default 3 min: a busy 2-core machine). */
  readonly convergeTimeoutMs?: number
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const LEAD_IN_MS = 2000

/**
 * Runs `fault` under load (see the module) and checks the window's writes; resolves with the
 * figures and the engine's writes of the window, for the fault's own checks.
 */
export async function underLoad(
  name: string,
  options: LoadOptions,
  fault: () => Promise<FaultResult>
): Promise<{ figures: FaultFigures; writes: EngineWrite[]; injectedAtMs: number }> {
  const { churn, auditLog } = options
  const timeoutMs = options.convergeTimeoutMs ?? 180_000
  await churn.awaitConverged(timeoutMs)
  const before = churn.writes
  const from = Date.now()
  churn.start(options.intervalMs ?? 200)
  let result: FaultResult
  let injectedAtMs: number
  try {
    await sleep(LEAD_IN_MS)
    injectedAtMs = Date.now()
    result = await fault()
    // The parents go on changing a while after the fault is over.
    await sleep(LEAD_IN_MS)
  } finally {
    await churn.stop()
  }
  const done = await churn.awaitConverged(timeoutMs)
  const writes = writesBetween(readEngineWrites(auditLog, FAULT_NAMESPACE), from, done)
  assert.deepEqual(doubleWrites(writes), [], `${name}: two writers at once`)
  const children = writes.filter(
    (w) => w.resource === 'configmaps' && (w.verb === 'create' || w.verb === 'delete')
  )
  assert.deepEqual(
    children.map((w) => `${w.verb} ${w.name} by ${w.ip}`),
    [],
    `${name}: a child was created or deleted again`
  )
  const figures: FaultFigures = {
    fault: name,
    convergedMs: done - injectedAtMs,
    afterHealMs: done - (result.healedAtMs ?? injectedAtMs),
    ...(result.handoverMs === undefined ? {} : { handoverMs: result.handoverMs }),
    parentWrites: churn.writes - before,
    engineWrites: writes.length,
    writers: writerRuns(writes)
      .map((r) => `${r.ip} (${r.writes})`)
      .join(' -> '),
    ...(result.note === undefined ? {} : { note: result.note }),
  }
  console.log(`  FIGURES ${JSON.stringify(figures)}`)
  return { figures, writes, injectedAtMs }
}
