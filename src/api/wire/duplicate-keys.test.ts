// The duplicate-key scanner: paths, escapes, strings that look like structure, deep nesting.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { findDuplicateKeys } from './duplicate-keys.js'

const paths = (text: string): unknown[] =>
  findDuplicateKeys(text).map((d) => [...d.container, d.key])

describe('findDuplicateKeys', () => {
  it('finds nothing in documents without repeated keys', () => {
    assert.deepEqual(paths('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}'), [])
    assert.deepEqual(paths('[1,"a",null,true]'), [])
    assert.deepEqual(paths('"x"'), [])
  })

  it('reports each repeated key once per object, with its path, in document order', () => {
    assert.deepEqual(paths('{"a":1,"a":2,"a":3}'), [['a']])
    assert.deepEqual(paths('[{"a":1,"a":2},{"a":1,"a":2}]'), [
      [0, 'a'],
      [1, 'a'],
    ])
    assert.deepEqual(paths('{"x":{"y":[0,{"k":1,"k":2}]},"z":1,"z":2}'), [
      ['x', 'y', 1, 'k'],
      ['z'],
    ])
  })

  it('compares keys after unescaping', () => {
    assert.deepEqual(paths('{"ab":1,"a\\u0062":2}'), [['ab']])
    assert.deepEqual(paths('{"a\\"b":1,"a\\"b":2}'), [['a"b']])
  })

  it('is not fooled by structure inside string values', () => {
    assert.deepEqual(paths('{"a":"{\\"a\\":1,\\"a\\":2}","b":"}],[{","c":1}'), [])
    assert.deepEqual(paths('{"s":"\\\\","s":1}'), [['s']])
  })

  it('tracks array indexes across nested values', () => {
    assert.deepEqual(paths('[[1,2],{"a":[3]},{"q":1,"q":1}]'), [[2, 'q']])
  })

  it('handles very deep nesting without recursion', () => {
    const depth = 100_000
    const text = '['.repeat(depth) + '{"a":1,"a":2}' + ']'.repeat(depth)
    const [found] = findDuplicateKeys(text)
    assert.equal(found?.container.length, depth)
  })
})
