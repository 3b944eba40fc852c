import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger, silentLogger } from './logger.js'
import type { LoggerOptions } from './logger.js'

const NOW = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 10))

/** A logger whose lines land in `lines`, at a fixed time. */
function capture(options: Omit<LoggerOptions, 'write' | 'now'> = {}) {
  const lines: string[] = []
  const log = createLogger({
    ...options,
    write: (line) => lines.push(line),
    now: () => NOW,
  })
  return { log, lines }
}

function parsed(line: string | undefined): Record<string, unknown> {
  assert.ok(line !== undefined, 'a line was written')
  return JSON.parse(line) as Record<string, unknown>
}

describe('createLogger', () => {
  it('writes one JSON object per line with time, level and msg', () => {
    const { log, lines } = capture()
    log.info('started')
    assert.equal(lines.length, 1)
    assert.ok(!lines[0]?.includes('\n'), 'a line holds no newline')
    assert.deepEqual(parsed(lines[0]), {
      time: '2024-05-06T07:08:09.010Z',
      level: 'info',
      msg: 'started',
    })
  })

  it('renders the time with the given encoder, in JSON and text alike', () => {
    const epoch = capture({ time: (date) => date.getTime() / 1000 })
    epoch.log.info('started')
    assert.equal(parsed(epoch.lines[0])['time'], NOW.getTime() / 1000)
    const text = capture({ format: 'text', time: () => 'T' })
    text.log.info('started')
    assert.equal(text.lines[0], 'T INFO  started')
  })

  it('adds the fields of the call after time, level and msg', () => {
    const { log, lines } = capture()
    log.warn('slow hook', { url: 'http://h/sync', ms: 1200, ok: false })
    assert.equal(
      lines[0],
      '{"time":"2024-05-06T07:08:09.010Z","level":"warn","msg":"slow hook","url":"http://h/sync","ms":1200,"ok":false}'
    )
  })

  it('carries child fields on every line, nested children adding theirs', () => {
    const { log, lines } = capture()
    const controller = log.child({ controller: 'web' })
    const parent = controller.child({ parent: 'ns/a' })
    controller.info('one')
    parent.info('two', { step: 1 })
    log.info('three')
    assert.deepEqual(parsed(lines[0]), {
      time: NOW.toISOString(),
      level: 'info',
      msg: 'one',
      controller: 'web',
    })
    assert.deepEqual(parsed(lines[1]), {
      time: NOW.toISOString(),
      level: 'info',
      msg: 'two',
      controller: 'web',
      parent: 'ns/a',
      step: 1,
    })
    assert.deepEqual(parsed(lines[2]), { time: NOW.toISOString(), level: 'info', msg: 'three' })
  })

  it('lets a call field override a child field of the same name', () => {
    const { log, lines } = capture()
    log.child({ parent: 'ns/a' }).info('x', { parent: 'ns/b' })
    assert.equal(parsed(lines[0])['parent'], 'ns/b')
  })

  it('drops lines below the level threshold, info by default', () => {
    const { log, lines } = capture()
    log.debug('hidden')
    log.info('i')
    log.warn('w')
    log.error('e')
    assert.deepEqual(
      lines.map((line) => parsed(line)['level']),
      ['info', 'warn', 'error']
    )
  })

  it('applies each threshold, and children keep their parent threshold', () => {
    const levels = ['debug', 'info', 'warn', 'error'] as const
    for (const [index, level] of levels.entries()) {
      const { log, lines } = capture({ level })
      const child = log.child({ c: 1 })
      for (const each of levels) child[each](each)
      assert.deepEqual(
        lines.map((line) => parsed(line)['msg']),
        levels.slice(index),
        `threshold ${level}`
      )
    }
  })

  it('renders text lines as time, padded level, message and key=value pairs', () => {
    const { log, lines } = capture({ format: 'text' })
    log.child({ controller: 'web' }).warn('hook failed', { status: 500, tags: ['a', 'b'] })
    log.info('plain')
    assert.equal(
      lines[0],
      '2024-05-06T07:08:09.010Z WARN  hook failed controller=web status=500 tags=["a","b"]'
    )
    assert.equal(lines[1], '2024-05-06T07:08:09.010Z INFO  plain')
  })

  it('renders errors as name and message, with their cause chain', () => {
    const { log, lines } = capture()
    const root = new TypeError('socket hang up')
    const error = new Error('hook call failed', { cause: root })
    log.error('sync failed', { error })
    assert.deepEqual(parsed(lines[0])['error'], {
      name: 'Error',
      message: 'hook call failed',
      cause: { name: 'TypeError', message: 'socket hang up' },
    })
  })

  it('renders a non-Error cause as it is, and omits an absent cause', () => {
    const { log, lines } = capture()
    log.error('a', { error: new RangeError('r', { cause: { code: 'E1' } }) })
    log.error('b', { error: new Error('plain') })
    assert.deepEqual(parsed(lines[0])['error'], {
      name: 'RangeError',
      message: 'r',
      cause: { code: 'E1' },
    })
    assert.deepEqual(parsed(lines[1])['error'], { name: 'Error', message: 'plain' })
  })

  it('renders errors carried as child fields and in text format too', () => {
    const { log, lines } = capture({ format: 'text' })
    log.child({ error: new Error('outer', { cause: new Error('inner') }) }).info('x')
    assert.equal(
      lines[0],
      '2024-05-06T07:08:09.010Z INFO  x error={"name":"Error","message":"outer","cause":{"name":"Error","message":"inner"}}'
    )
  })

  it('renders the name of an error subclass', () => {
    class HookCallError extends Error {
      override readonly name = 'HookCallError'
    }
    const { log, lines } = capture()
    log.warn('x', { error: new HookCallError('bad') })
    assert.deepEqual(parsed(lines[0])['error'], { name: 'HookCallError', message: 'bad' })
  })
})

describe('silentLogger', () => {
  it('accepts every level and child without writing', () => {
    assert.doesNotThrow(() => {
      silentLogger.debug('a')
      silentLogger.info('b', { x: 1 })
      silentLogger.warn('c')
      silentLogger.error('d', { error: new Error('e') })
      silentLogger.child({ y: 2 }).error('f')
    })
  })
})

describe('createLogger error stacks', () => {
  it('logs an error stack only at debug level', () => {
    const lines: string[] = []
    const error = new Error('boom')
    createLogger({ level: 'info', write: (l) => lines.push(l) }).error('failed', { error })
    createLogger({ level: 'debug', write: (l) => lines.push(l) }).error('failed', { error })
    const [info, debug] = lines.map((l) => JSON.parse(l) as { error: { stack?: string } })
    assert.equal(info?.error.stack, undefined)
    assert.match(debug?.error.stack ?? '', /^Error: boom\n\s+at /)
  })
})
