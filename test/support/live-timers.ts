import { createHook } from 'node:async_hooks'

/**
 * Runs `work` and returns how many of the timers created while it ran are still pending
 * afterwards (neither cleared nor fired), unreferenced ones included: the proof that a piece of
 * code lets go of its deadlines when it ends.
 */
export async function timersLeftBy(work: () => Promise<void>): Promise<number> {
  const live = new Set<number>()
  const hook = createHook({
    init: (id, type) => {
      if (type === 'Timeout') live.add(id)
    },
    destroy: (id) => live.delete(id),
  }).enable()
  try {
    await work()
    // Destroy hooks of timers cleared at the very end run on a later turn.
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    hook.disable()
  }
  return live.size
}
