// Annotation selectors: label-selector semantics, but free-text values and lowercased key checks.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AnnotationSelector } from './annotation-selector.js'
import { compileAnnotationSelector } from './annotation-selector.js'
import { LabelSelectorError } from './label-selector-error.js'
import { compileLabelSelector } from './label-selector.js'

/** Free-text annotation values no label could hold: long, spaces, JSON, a URL, a newline. */
const FREE_TEXT = [
  'This object is decorated by the team-a controller; ask #team-a before changing it.',
  '{"replicas":3,"zones":["a","b"]}',
  'https://example.com/runbooks/web?x=1&y=2',
  'line one\nline two',
  '-leading-dash',
  'x'.repeat(300),
]

/** A selector straight from JSON, as it arrives from the cluster (possibly malformed). */
function fromJson(text: string): AnnotationSelector {
  return JSON.parse(text) as AnnotationSelector
}

/** Asserts that a call throws a LabelSelectorError worded for annotations whose message matches. */
function assertAnnotationSelectorError(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof LabelSelectorError, String(error))
    assert.match(error.message, /^invalid annotation selector: /)
    assert.match(error.message, message)
    return true
  })
}

describe('compileAnnotationSelector', () => {
  it('matches everything for nil and empty selectors', () => {
    for (const selector of [undefined, null, {}, { matchAnnotations: {}, matchExpressions: [] }]) {
      const matches = compileAnnotationSelector(selector)
      assert.equal(matches(undefined), true)
      assert.equal(matches({}), true)
      assert.equal(matches({ any: 'thing' }), true)
    }
  })

  it('matches free-text values exactly in matchAnnotations', () => {
    for (const value of FREE_TEXT) {
      const matches = compileAnnotationSelector({ matchAnnotations: { 'example.com/note': value } })
      assert.equal(matches({ 'example.com/note': value, other: 'x' }), true, value)
      assert.equal(matches({ 'example.com/note': `${value}!` }), false, value)
      assert.equal(matches({}), false, value)
      assert.equal(matches(undefined), false, value)
    }
  })

  it('accepts In and NotIn values that are not valid label values', () => {
    const values = FREE_TEXT.slice(0, 3)
    const selector = { matchExpressions: [{ key: 'note', operator: 'In' as const, values }] }
    // The same selector over labels is refused: the difference is the point of the vocabulary.
    assert.throws(() => compileLabelSelector(selector), LabelSelectorError)
    const matches = compileAnnotationSelector(selector)
    assert.equal(matches({ note: FREE_TEXT[1] ?? '' }), true)
    assert.equal(matches({ note: 'short' }), false)
    assert.equal(matches({}), false)
    const notIn = compileAnnotationSelector({
      matchExpressions: [{ key: 'note', operator: 'NotIn', values }],
    })
    assert.equal(notIn({ note: FREE_TEXT[0] ?? '' }), false)
    assert.equal(notIn({ note: 'short' }), true)
  })

  it('lets NotIn and DoesNotExist match objects without the key', () => {
    const notIn = compileAnnotationSelector({
      matchExpressions: [{ key: 'skip', operator: 'NotIn', values: ['true'] }],
    })
    assert.equal(notIn({ skip: 'true' }), false)
    assert.equal(notIn({ skip: 'false' }), true)
    assert.equal(notIn({}), true)
    assert.equal(notIn(undefined), true)
    const absent = compileAnnotationSelector({
      matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }],
    })
    assert.equal(absent({ skip: '' }), false)
    assert.equal(absent({ other: 'x' }), true)
    assert.equal(absent(undefined), true)
  })

  it('checks presence with Exists, also for an empty value', () => {
    const matches = compileAnnotationSelector({
      matchExpressions: [{ key: 'example.com/decorate', operator: 'Exists' }],
    })
    assert.equal(matches({ 'example.com/decorate': '' }), true)
    assert.equal(matches({ 'example.com/decorate': FREE_TEXT[0] ?? '' }), true)
    assert.equal(matches({ decorate: 'x' }), false)
    assert.equal(matches(undefined), false)
  })

  it('ANDs matchAnnotations with matchExpressions', () => {
    const matches = compileAnnotationSelector({
      matchAnnotations: { owner: 'team a' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front end', 'back end'] },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    })
    assert.equal(matches({ owner: 'team a', tier: 'front end' }), true)
    assert.equal(matches({ owner: 'team a', tier: 'front end', legacy: 'yes' }), false)
    assert.equal(matches({ owner: 'team b', tier: 'front end' }), false)
    assert.equal(matches({ owner: 'team a' }), false)
  })

  it('does not see inherited properties as annotations', () => {
    const matches = compileAnnotationSelector({
      matchExpressions: [{ key: 'constructor', operator: 'DoesNotExist' }],
    })
    assert.equal(matches({}), true)
  })

  it('checks keys as the API server checks annotation keys (case-insensitively)', () => {
    const matches = compileAnnotationSelector({ matchAnnotations: { 'Example.COM/Owner': 'a' } })
    assert.equal(matches({ 'Example.COM/Owner': 'a' }), true)
    assert.equal(matches({ 'example.com/owner': 'a' }), false, 'keys are compared exactly')
    assertAnnotationSelectorError(
      () => compileAnnotationSelector({ matchAnnotations: { 'bad key': 'x' } }),
      /matchAnnotations\["bad key"\]: invalid annotation key "bad key": the name part/
    )
    assertAnnotationSelectorError(
      () =>
        compileAnnotationSelector({
          matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }],
        }),
      /matchExpressions\[0\]\.key: invalid annotation key "a\/b\/c": a key may contain at most one/
    )
  })

  it('refuses invalid operators and value lists with a typed error', () => {
    assertAnnotationSelectorError(
      () =>
        compileAnnotationSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      /operator In needs at least one entry in "values"/
    )
    assertAnnotationSelectorError(
      () =>
        compileAnnotationSelector({
          matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }],
        }),
      /operator Exists takes no values/
    )
    assertAnnotationSelectorError(
      () =>
        compileAnnotationSelector(fromJson('{"matchExpressions":[{"key":"a","operator":"in"}]}')),
      /operator "in" is not one of In, NotIn, Exists, DoesNotExist/
    )
    assertAnnotationSelectorError(
      () => compileAnnotationSelector(fromJson('{"matchAnnotations":{"a":1}}')),
      /matchAnnotations\["a"\] must be a string annotation value, not number 1/
    )
    assertAnnotationSelectorError(
      () => compileAnnotationSelector(fromJson('{"matchAnnotations":["a"]}')),
      /matchAnnotations must be an object of annotation keys to values, not an array/
    )
  })
})
