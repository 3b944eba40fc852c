// Waits measured in event-loop turns, for unit tests of code driven by promises and a fake clock:
// no wall-clock time, so a slow machine changes nothing but the duration.
import assert from 'node:assert/strict'

/** Lets every callback queued so far run: one turn of the event loop. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Settles until `condition` holds; fails after `turns` turns instead of hanging the run. */
export async function until(condition: () => boolean, what: string, turns = 500): Promise<void> {
  for (let turn = 0; turn < turns; turn++) {
    if (condition()) return
    await settle()
  }
  assert.fail(`timed out waiting until ${what}`)
}

/** Settles a fixed number of turns, for asserting that nothing more happens. */
export async function settleMany(turns = 20): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await settle()
}
