import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { diffHunks, diffLines } from './render-diff.js'

const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l']

describe('render --diff hunks', () => {
  it('shows only the changed lines with three lines of context, under diff -u headers', () => {
    const after = before.map((line) => (line === 'b' ? 'B' : line === 'k' ? 'K' : line))
    assert.deepEqual(diffHunks(diffLines(before, after)), [
      '@@ -1,5 +1,5 @@',
      '  a',
      '- b',
      '+ B',
      '  c',
      '  d',
      '  e',
      '@@ -8,5 +8,5 @@',
      '  h',
      '  i',
      '  j',
      '- k',
      '+ K',
      '  l',
    ])
  })

  it('joins changes whose context touches, and counts added and removed lines', () => {
    const after = ['a', 'b', 'x', 'y', 'c', 'd', 'e', 'f', 'h', 'i', 'j', 'k', 'l']
    assert.deepEqual(diffHunks(diffLines(before, after)), [
      '@@ -1,10 +1,11 @@',
      '  a',
      '  b',
      '+ x',
      '+ y',
      '  c',
      '  d',
      '  e',
      '  f',
      '- g',
      '  h',
      '  i',
      '  j',
    ])
  })

  it('prints nothing for equal objects', () => {
    assert.deepEqual(diffHunks(diffLines(before, before)), [])
  })
})
