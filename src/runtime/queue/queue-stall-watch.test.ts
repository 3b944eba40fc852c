import assert from 'node:assert/strict'
import { describe, it, mock } from 'node:test'
import { FakeClock } from '../clock/fake-clock.js'
import type { Logger, LogFields } from '../diagnostics/logger.js'
import { stallChange, watchQueueStall } from './queue-stall-watch.js'
import { WorkQueue } from './work-queue.js'

interface Line {
  readonly level: string
  readonly message: string
  readonly fields: LogFields | undefined
}

function recordingLogger(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, fields })
    }
  const log: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    v: (level, message, fields) => {
      at(`v${level}`)(message, fields)
    },
    enabled: () => true,
    child: () => log,
    named: () => log,
  }
  return log
}

describe('stallChange', () => {
  it('begins above the threshold, ends at or below it, and is quiet otherwise', () => {
    assert.equal(stallChange(false, 1001, 1000), 'began')
    assert.equal(stallChange(false, 1000, 1000), undefined)
    assert.equal(stallChange(true, 5000, 1000), undefined, 'one line per episode')
    assert.equal(stallChange(true, 1000, 1000), 'ended')
  })
})

describe('WorkQueue.oldestWaiting', () => {
  it('names the key pending longest, and nothing once workers took every key', async () => {
    const clock = new FakeClock()
    const queue = new WorkQueue({ clock })
    assert.equal(queue.oldestWaiting(), undefined)
    queue.add('a')
    clock.advance(500)
    queue.add('b')
    clock.advance(250)
    assert.deepEqual(queue.oldestWaiting(), { key: 'a', waitedMs: 750 })
    assert.equal(await queue.get(), 'a')
    assert.deepEqual(queue.oldestWaiting(), { key: 'b', waitedMs: 250 })
    assert.equal(await queue.get(), 'b')
    assert.equal(queue.oldestWaiting(), undefined)
  })
})

describe('watchQueueStall', () => {
  it('warns and counts once when the oldest key waits too long, and says when it caught up', async () => {
    mock.timers.enable({ apis: ['setInterval'] })
    try {
      const clock = new FakeClock()
      const queue = new WorkQueue({ name: 'web', clock })
      const lines: Line[] = []
      const waits: number[] = []
      let stalls = 0
      const stop = watchQueueStall(queue, {
        log: recordingLogger(lines),
        thresholdMs: 60_000,
        checkIntervalMs: 10_000,
        metrics: {
          oldestWait: (ms) => waits.push(ms),
          stalled: () => (stalls += 1),
        },
      })
      queue.add('ns/stuck')
      for (let i = 0; i < 9; i += 1) {
        clock.advance(10_000)
        mock.timers.tick(10_000)
      }
      assert.equal(stalls, 1)
      const warnings = lines.filter((l) => l.level === 'warn')
      assert.equal(warnings.length, 1, 'one warning for the whole episode')
      const fields = warnings[0]?.fields ?? {}
      assert.equal(fields['queue'], 'web')
      assert.equal(fields['key'], 'ns/stuck')
      assert.equal(waits.at(-1), 90_000)
      assert.equal(await queue.get(), 'ns/stuck')
      mock.timers.tick(10_000)
      assert.deepEqual(
        lines.map((l) => l.level),
        ['warn', 'info']
      )
      assert.equal(waits.at(-1), 0)
      stop()
      mock.timers.tick(10_000)
      assert.equal(waits.length, 10, 'no check after stop')
    } finally {
      mock.timers.reset()
    }
  })
})
