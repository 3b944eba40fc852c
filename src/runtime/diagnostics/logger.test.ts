import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger, silentLogger } from './logger.js'
import type { LoggerOptions } from './logger.js'

const NOW = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 10))

/** A logger whose lines land in `lines`, at a fixed time. */
function capture(options: Omit<LoggerOptions, 'write' | 'now'> = {}) {
  const lines: string[] = []
  const log = createLogger({
    caller: false,
    time: (date) => date.toISOString(),
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
  it('writes one JSON object per line with level, ts and msg', () => {
    const { log, lines } = capture()
    log.info('started')
    assert.equal(lines.length, 1)
    assert.ok(!lines[0]?.includes('\n'), 'a line holds no newline')
    assert.deepEqual(parsed(lines[0]), {
      level: 'info',
      ts: '2024-05-06T07:08:09.010Z',
      msg: 'started',
    })
  })

  it('renders the time with the given encoder, in JSON and text alike', () => {
    const epoch = capture({ time: (date) => date.getTime() / 1000 })
    epoch.log.info('started')
    assert.equal(parsed(epoch.lines[0])['ts'], NOW.getTime() / 1000)
    const text = capture({ format: 'text', time: () => 'T' })
    text.log.info('started')
    assert.equal(text.lines[0], 'T\tINFO\tstarted')
  })

  it('adds the fields of the call after level, ts and msg', () => {
    const { log, lines } = capture()
    log.warn('slow hook', { url: 'http://h/sync', ms: 1200, ok: false })
    assert.equal(
      lines[0],
      '{"level":"warn","ts":"2024-05-06T07:08:09.010Z","msg":"slow hook","url":"http://h/sync","ms":1200,"ok":false}'
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
      level: 'info',
      ts: NOW.toISOString(),
      msg: 'one',
      controller: 'web',
    })
    assert.deepEqual(parsed(lines[1]), {
      level: 'info',
      ts: NOW.toISOString(),
      msg: 'two',
      controller: 'web',
      parent: 'ns/a',
      step: 1,
    })
    assert.deepEqual(parsed(lines[2]), { level: 'info', ts: NOW.toISOString(), msg: 'three' })
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

  it("renders text lines in zap's console layout: tab-separated head, fields as JSON", () => {
    const { log, lines } = capture({ format: 'text' })
    log.child({ controller: 'web' }).warn('hook failed', { status: 500, tags: ['a', 'b'] })
    log.named('engine').info('plain')
    assert.equal(
      lines[0],
      '2024-05-06T07:08:09.010Z\tWARN\thook failed\t{"controller":"web","status":500,"tags":["a","b"]}'
    )
    assert.equal(lines[1], '2024-05-06T07:08:09.010Z\tINFO\tengine\tplain')
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
      '2024-05-06T07:08:09.010Z\tINFO\tx\t{"error":{"name":"Error","message":"outer","cause":{"name":"Error","message":"inner"}}}'
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

describe('createLogger, as zap writes', () => {
  it('writes epoch seconds in ts by default, and the caller as directory/file:line', () => {
    const lines: string[] = []
    const at = Date.now() / 1000
    createLogger({ write: (l) => lines.push(l) }).info('x')
    const line = parsed(lines[0])
    assert.deepEqual(Object.keys(line), ['level', 'ts', 'caller', 'msg'])
    assert.equal(typeof line['ts'], 'number')
    assert.ok(Math.abs(Number(line['ts']) - at) < 60)
    assert.match(String(line['caller']), /^diagnostics\/logger\.test\.ts:\d+$/)
  })

  it('joins names with dots in logger', () => {
    const { log, lines } = capture()
    log.named('engine').named('discovery').info('x')
    assert.equal(parsed(lines[0])['logger'], 'engine.discovery')
  })

  it('grades verbosity as logr on zap: V(1) is debug, V(n) is Level(-n), a number N writes up to V(N)', () => {
    const { log, lines } = capture({ level: 5 })
    for (const level of [1, 4, 5, 6, 7]) log.v(level, `v${level}`)
    assert.deepEqual(
      lines.map((line) => [parsed(line)['level'], parsed(line)['msg']]),
      [
        ['debug', 'v1'],
        ['Level(-4)', 'v4'],
        ['Level(-5)', 'v5'],
      ]
    )
    assert.equal(log.enabled(5), true)
    assert.equal(log.enabled(6), false)
    assert.equal(capture({ level: 'info' }).log.enabled(1), false)
    assert.equal(capture({ level: 'debug' }).log.enabled(1), true)
    const text = capture({ format: 'text', level: 4 })
    text.log.v(4, 'x')
    assert.match(text.lines[0] ?? '', /\tLEVEL\(-4\)\tx$/)
  })

  it('adds the call stack as stacktrace, last, at and above the stacktrace level', () => {
    const { log, lines } = capture({ stacktraceLevel: 'warn', level: 'debug' })
    log.info('no')
    log.warn('yes', { a: 1 })
    assert.equal(parsed(lines[0])['stacktrace'], undefined)
    const line = parsed(lines[1])
    assert.deepEqual(Object.keys(line).slice(-2), ['a', 'stacktrace'])
    assert.match(String(line['stacktrace']), /^at .*logger\.test\.ts:\d+:\d+/)
    const errors = capture()
    errors.log.warn('w')
    errors.log.error('e')
    assert.deepEqual(
      errors.lines.map((l) => parsed(l)['stacktrace'] !== undefined),
      [false, true],
      'error by default'
    )
  })
})
