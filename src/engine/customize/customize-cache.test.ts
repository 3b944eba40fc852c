import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CUSTOMIZE_CACHE_TTL_MS, CustomizeCache } from './customize-cache.js'

function clock(): { now: () => number; advance: (ms: number) => void } {
  let now = 1_000
  return {
    now: () => now,
    advance: (ms) => {
      now += ms
    },
  }
}

describe('CustomizeCache', () => {
  it('keys answers by UID and generation', () => {
    const cache = new CustomizeCache<string>()
    cache.set('uid-1', 1, 'a')
    assert.equal(cache.get('uid-1', 1), 'a')
    assert.equal(cache.get('uid-1', 2), undefined, 'a new generation asks again')
    assert.equal(cache.get('uid-2', 1), undefined, 'a recreated parent (new UID) asks again')
  })

  it('expires an answer 20 minutes after it was set, however often it is read', () => {
    const time = clock()
    const cache = new CustomizeCache<string>({ now: time.now })
    cache.set('u', 1, 'a')
    time.advance(CUSTOMIZE_CACHE_TTL_MS - 1)
    assert.equal(cache.get('u', 1), 'a')
    time.advance(1)
    assert.equal(cache.get('u', 1), undefined)
  })

  it('sweeps expired entries on access once the cleanup interval has passed', () => {
    const time = clock()
    const cache = new CustomizeCache<string>({ now: time.now, ttlMs: 100, cleanupIntervalMs: 50 })
    cache.set('old', 1, 'a')
    time.advance(100)
    cache.set('new', 1, 'b')
    assert.equal(cache.size, 1)
    assert.equal(cache.get('new', 1), 'b')
  })

  it('keeps only the newest generation of a parent', () => {
    const cache = new CustomizeCache<string>()
    cache.set('u', 1, 'a')
    cache.set('u', 2, 'b')
    assert.equal(cache.size, 1)
    assert.equal(cache.get('u', 1), undefined)
    assert.equal(cache.get('u', 2), 'b')
  })

  it('holds at most maxEntries parents, dropping the answer set longest ago', () => {
    const cache = new CustomizeCache<string>({ maxEntries: 2 })
    cache.set('a', 1, 'a')
    cache.set('b', 1, 'b')
    cache.set('a', 2, 'a2')
    cache.set('c', 1, 'c')
    assert.equal(cache.size, 2)
    assert.equal(cache.get('b', 1), undefined, 'b was set longest ago')
    assert.equal(cache.get('a', 2), 'a2')
    assert.equal(cache.get('c', 1), 'c')
  })
  it('retains only the parents the predicate keeps', () => {
    const cache = new CustomizeCache<string>()
    cache.set('a', 1, 'a')
    cache.set('b', 1, 'b')
    assert.equal(
      cache.retain((uid) => uid === 'a'),
      1
    )
    assert.equal(cache.get('a', 1), 'a')
    assert.equal(cache.get('b', 1), undefined)
  })
})
