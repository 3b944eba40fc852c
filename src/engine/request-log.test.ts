import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../runtime/diagnostics/logger.js'
import { loggingRequestObserver } from './request-log.js'

function logged(level: number): Record<string, unknown>[] {
  const lines: string[] = []
  const seen: string[] = []
  const observer = loggingRequestObserver(createLogger({ level, write: (l) => lines.push(l) }), {
    onRequest: (info) => seen.push(info.path),
  })
  const request = { statusCode: 200, durationMs: 3, throttledMs: 0 }
  for (const [method, path] of [
    ['GET', '/apis/apps/v1'],
    ['GET', '/api/v1/namespaces/a/pods'],
    ['POST', '/api/v1/namespaces/a/configmaps'],
    ['GET', '/api'],
  ] as const)
    observer.onRequest({ ...request, method, path })
  assert.equal(seen.length, 4, 'every request reaches the next observer')
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
}

describe('loggingRequestObserver', () => {
  it('logs writes at V(4) and discovery at V(7), never plain reads', () => {
    assert.deepEqual(logged(3), [])
    assert.deepEqual(
      logged(4).map((l) => [l['level'], l['msg'], l['verb'], l['path'], l['code']]),
      [['Level(-4)', 'API write', 'POST', '/api/v1/namespaces/a/configmaps', 200]]
    )
    assert.deepEqual(
      logged(7).map((l) => [l['msg'], l['path']]),
      [
        ['discovery request', '/apis/apps/v1'],
        ['API write', '/api/v1/namespaces/a/configmaps'],
        ['discovery request', '/api'],
      ]
    )
  })
})
