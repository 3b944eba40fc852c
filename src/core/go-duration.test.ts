import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseGoDuration } from './go-duration.js'

describe('parseGoDuration', () => {
  it('parses single and compound Go durations to milliseconds', () => {
    assert.equal(parseGoDuration('10s'), 10_000)
    assert.equal(parseGoDuration('250ms'), 250)
    assert.equal(parseGoDuration('1m30s'), 90_000)
    assert.equal(parseGoDuration('1.5h'), 5_400_000)
    assert.equal(parseGoDuration('0'), 0)
    assert.equal(parseGoDuration('-2s'), -2000)
    assert.equal(parseGoDuration('1500us'), 1.5)
  })

  it('a duration longer than Go can represent is refused, as Go refuses it', () => {
    // Go's int64 nanoseconds end at 2562047h47m16.854775807s.
    assert.equal(parseGoDuration('2562047h'), 2562047 * 3_600_000)
    assert.equal(parseGoDuration('2562048h'), undefined)
    assert.equal(parseGoDuration('-99999999999999999999s'), undefined)
  })

  it('rejects text that is not a Go duration', () => {
    for (const bad of ['', '10', 's', '10x', '1 s', 'ten seconds', '1s2']) {
      assert.equal(parseGoDuration(bad), undefined, bad)
    }
  })
})
