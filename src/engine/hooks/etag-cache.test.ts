import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EtagCache, etagCacheKey } from './etag-cache.js'

describe('EtagCache', () => {
  it('returns what was stored until the timeout passes', () => {
    let now = 1_000
    const cache = new EtagCache(
      { enabled: true, cacheTimeoutMs: 10_000, cacheCleanupMs: undefined },
      () => now
    )
    cache.set('k', '"e1"', '{"a":1}')
    assert.deepEqual(cache.get('k'), { etag: '"e1"', body: '{"a":1}', storedMs: 1_000 })
    now += 10_000
    assert.equal(cache.get('k')?.etag, '"e1"', 'still fresh at exactly the timeout')
    now += 1
    assert.equal(cache.get('k'), undefined)
    assert.equal(cache.size, 1, 'expired entries stay until a cleanup')
    cache.cleanup()
    assert.equal(cache.size, 0)
    cache.close()
  })

  it('never expires without a timeout', () => {
    let now = 0
    const cache = new EtagCache(
      { enabled: true, cacheTimeoutMs: undefined, cacheCleanupMs: undefined },
      () => now
    )
    cache.set('k', '"e"', 'b')
    now = 1e12
    cache.cleanup()
    assert.equal(cache.get('k')?.body, 'b')
  })
})

describe('etagCacheKey', () => {
  it('keys by the parent (or decorator object) kind, namespace and name', () => {
    assert.equal(
      etagCacheKey({ parent: { kind: 'P', metadata: { namespace: 'ns', name: 'a' } } }),
      'P/ns/a'
    )
    assert.equal(etagCacheKey({ object: { kind: 'Svc', metadata: { name: 'b' } } }), 'Svc//b')
    assert.equal(etagCacheKey({ children: {} }), undefined)
  })
})
