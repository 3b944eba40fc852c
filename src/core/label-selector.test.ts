// Label selector semantics, the string syntax, and the format -> parse round trip.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LabelSelectorError } from './label-selector-error.js'
import type { LabelSelector } from './label-selector.js'
import {
  compileLabelSelector,
  equalityTerms,
  formatSelector,
  isEmptySelector,
  isLabelSelectorOperator,
} from './label-selector.js'
import { parseSelectorString } from './parse-selector-string.js'

const LABEL_SETS: readonly (Record<string, string> | undefined)[] = [
  undefined,
  {},
  { app: 'web' },
  { app: 'db' },
  { app: 'web', tier: 'front' },
  { app: 'web', tier: 'back', env: 'prod' },
  { tier: 'front' },
  { env: '' },
  { 'example.com/team': 'a' },
]

/** Asserts that two selectors select exactly the same label sets. */
function assertSameMatches(a: LabelSelector, b: LabelSelector): void {
  const left = compileLabelSelector(a)
  const right = compileLabelSelector(b)
  for (const labels of LABEL_SETS) {
    assert.equal(left(labels), right(labels), `labels ${JSON.stringify(labels)}`)
  }
}

/** Asserts that a call throws a LabelSelectorError whose message matches. */
function assertSelectorError(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof LabelSelectorError, String(error))
    assert.equal(error.name, 'LabelSelectorError')
    assert.match(error.message, message)
    return true
  })
}

describe('compileLabelSelector', () => {
  it('matches everything for nil and empty selectors', () => {
    for (const selector of [undefined, null, {}, { matchLabels: {}, matchExpressions: [] }]) {
      const matches = compileLabelSelector(selector)
      assert.equal(matches(undefined), true)
      assert.equal(matches({ any: 'thing' }), true)
      assert.equal(isEmptySelector(selector), true)
    }
    assert.equal(isEmptySelector({ matchLabels: { a: 'b' } }), false)
    assert.equal(isEmptySelector({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }), false)
  })

  it('ANDs matchLabels entries', () => {
    const matches = compileLabelSelector({ matchLabels: { app: 'web', tier: 'front' } })
    assert.equal(matches({ app: 'web', tier: 'front', extra: 'x' }), true)
    assert.equal(matches({ app: 'web' }), false)
    assert.equal(matches({ app: 'web', tier: 'back' }), false)
    assert.equal(matches(undefined), false)
  })

  it('treats In as membership of a present key', () => {
    const matches = compileLabelSelector({
      matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }],
    })
    assert.equal(matches({ app: 'web' }), true)
    assert.equal(matches({ app: 'db' }), true)
    assert.equal(matches({ app: 'cache' }), false)
    assert.equal(matches({}), false)
  })

  it('lets NotIn match objects without the key', () => {
    const matches = compileLabelSelector({
      matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }],
    })
    assert.equal(matches({ app: 'db' }), true)
    assert.equal(matches({}), true)
    assert.equal(matches(undefined), true)
    assert.equal(matches({ app: 'web' }), false)
  })

  it('checks presence with Exists and absence with DoesNotExist', () => {
    const exists = compileLabelSelector({ matchExpressions: [{ key: 'env', operator: 'Exists' }] })
    assert.equal(exists({ env: '' }), true)
    assert.equal(exists({ app: 'web' }), false)
    const absent = compileLabelSelector({
      matchExpressions: [{ key: 'env', operator: 'DoesNotExist', values: [] }],
    })
    assert.equal(absent({ app: 'web' }), true)
    assert.equal(absent(undefined), true)
    assert.equal(absent({ env: '' }), false)
  })

  it('ANDs matchLabels with matchExpressions', () => {
    const matches = compileLabelSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front'] },
        { key: 'env', operator: 'DoesNotExist' },
      ],
    })
    assert.equal(matches({ app: 'web', tier: 'front' }), true)
    assert.equal(matches({ app: 'web', tier: 'front', env: 'prod' }), false)
    assert.equal(matches({ app: 'db', tier: 'front' }), false)
  })

  it('does not see inherited properties as labels', () => {
    const matches = compileLabelSelector({
      matchExpressions: [{ key: 'toString', operator: 'Exists' }],
    })
    assert.equal(matches({}), false)
  })

  it('refuses invalid operators and value lists with a typed error', () => {
    const cast = (value: unknown): LabelSelector => value as LabelSelector
    assertSelectorError(
      () =>
        compileLabelSelector(
          cast({ matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] })
        ),
      /matchExpressions\[0\] \(key "a"\): operator "in" is not one of In, NotIn, Exists, DoesNotExist/
    )
    assertSelectorError(
      () => compileLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In' }] }),
      /operator In needs at least one entry in "values"/
    )
    assertSelectorError(
      () =>
        compileLabelSelector({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }),
      /operator NotIn needs at least one entry/
    )
    assertSelectorError(
      () =>
        compileLabelSelector({
          matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }],
        }),
      /operator Exists takes no values; remove "values"/
    )
    assertSelectorError(
      () => compileLabelSelector(cast({ matchLabels: { a: 1 } })),
      /matchLabels\["a"\] must be a string label value, not number 1/
    )
    assertSelectorError(
      () => compileLabelSelector(cast({ matchExpressions: { key: 'a' } })),
      /matchExpressions must be a list/
    )
    assertSelectorError(
      () => compileLabelSelector(cast({ matchExpressions: [null] })),
      /matchExpressions\[0\] must be an object/
    )
  })

  it('validates label keys and values like Kubernetes', () => {
    assertSelectorError(
      () => compileLabelSelector({ matchLabels: { 'bad key': 'x' } }),
      /invalid label key "bad key": the name part must consist of alphanumeric/
    )
    assertSelectorError(
      () => compileLabelSelector({ matchLabels: { 'Example.com/a': 'x' } }),
      /prefix before "\/" must be a lowercase DNS subdomain/
    )
    assertSelectorError(
      () => compileLabelSelector({ matchLabels: { 'a/b/c': 'x' } }),
      /at most one "\/"/
    )
    assertSelectorError(
      () => compileLabelSelector({ matchLabels: { a: 'x'.repeat(64) } }),
      /label value must be at most 63 characters/
    )
    assertSelectorError(
      () =>
        compileLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: ['-x'] }] }),
      /invalid label value "-x"/
    )
    const matches = compileLabelSelector({
      matchLabels: { 'app.kubernetes.io/name': 'web', a: '' },
    })
    assert.equal(matches({ 'app.kubernetes.io/name': 'web', a: '' }), true)
  })
})

describe('isLabelSelectorOperator', () => {
  it('accepts exactly the four operators', () => {
    for (const op of ['In', 'NotIn', 'Exists', 'DoesNotExist'])
      assert.equal(isLabelSelectorOperator(op), true)
    for (const op of ['in', 'Equals', '', null, 3]) assert.equal(isLabelSelectorOperator(op), false)
  })
})

describe('parseSelectorString', () => {
  it('parses every operator of the syntax', () => {
    assert.deepEqual(parseSelectorString('a=b,c!=d,e in (x,y),!f,g'), {
      matchLabels: { a: 'b' },
      matchExpressions: [
        { key: 'c', operator: 'NotIn', values: ['d'] },
        { key: 'e', operator: 'In', values: ['x', 'y'] },
        { key: 'f', operator: 'DoesNotExist' },
        { key: 'g', operator: 'Exists' },
      ],
    })
    assert.deepEqual(parseSelectorString('a==b, h notin (p, q)'), {
      matchLabels: { a: 'b' },
      matchExpressions: [{ key: 'h', operator: 'NotIn', values: ['p', 'q'] }],
    })
  })

  it('selects everything for empty or blank text', () => {
    assert.deepEqual(parseSelectorString(''), {})
    assert.deepEqual(parseSelectorString('  \t'), {})
  })

  it('gives != the NotIn meaning (objects without the key match)', () => {
    const matches = compileLabelSelector(parseSelectorString('app!=web'))
    assert.equal(matches({ app: 'db' }), true)
    assert.equal(matches({}), true)
    assert.equal(matches({ app: 'web' }), false)
  })

  it('accepts empty values and keyword-like values', () => {
    assert.deepEqual(parseSelectorString('a='), { matchLabels: { a: '' } })
    assert.deepEqual(parseSelectorString('a=in'), { matchLabels: { a: 'in' } })
    assert.deepEqual(parseSelectorString('a in (,x)'), {
      matchExpressions: [{ key: 'a', operator: 'In', values: ['', 'x'] }],
    })
    assert.deepEqual(parseSelectorString('a in (x,x)'), {
      matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }],
    })
  })

  it('keeps repeated equality on one key as an extra In requirement', () => {
    const selector = parseSelectorString('a=b,a=c')
    assert.deepEqual(selector, {
      matchLabels: { a: 'b' },
      matchExpressions: [{ key: 'a', operator: 'In', values: ['c'] }],
    })
    assert.equal(compileLabelSelector(selector)({ a: 'b' }), false)
  })

  it('reports parse errors with the column and what was expected', () => {
    assertSelectorError(
      () => parseSelectorString('a=b,'),
      /invalid label selector "a=b,": at column 5: expected a requirement after ",", found the end of the selector/
    )
    assertSelectorError(
      () => parseSelectorString('a=b,,c'),
      /at column 5: expected a requirement after ",", found ","/
    )
    assertSelectorError(
      () => parseSelectorString('a in x'),
      /at column 6: expected "\(" after "in", found "x"/
    )
    assertSelectorError(
      () => parseSelectorString('a in ()'),
      /operator in needs at least one value/
    )
    assertSelectorError(
      () => parseSelectorString('a in (x y)'),
      /expected "," or "\)" between values, found "y"/
    )
    assertSelectorError(() => parseSelectorString('a in (x'), /expected a value, "," or "\)"/)
    assertSelectorError(
      () => parseSelectorString('a b'),
      /at column 3: expected an operator: =, ==, !=, in or notin, found "b"/
    )
    assertSelectorError(() => parseSelectorString('a>1'), /the ">" operator is not supported here/)
    assertSelectorError(
      () => parseSelectorString('!a=b'),
      /expected "," or the end of the selector, found "="/
    )
    assertSelectorError(() => parseSelectorString('!'), /expected a label key after "!"/)
    assertSelectorError(() => parseSelectorString('=b'), /at column 1: expected a label key or "!"/)
    assertSelectorError(() => parseSelectorString('a=(b)'), /expected a label value, found "\("/)
    assertSelectorError(
      () => parseSelectorString('a_=b'),
      /at column 1: invalid label key "a_": the name part must consist of/
    )
    assertSelectorError(() => parseSelectorString('a=-b'), /at column 3: invalid label value "-b"/)
  })

  it('carries the selector text on the error', () => {
    try {
      parseSelectorString('a b')
      assert.fail('expected an error')
    } catch (error) {
      assert.ok(error instanceof LabelSelectorError)
      assert.equal(error.selectorText, 'a b')
    }
  })
})

describe('formatSelector', () => {
  it('prints the string syntax sorted by key, with sorted values', () => {
    assert.equal(
      formatSelector({
        matchLabels: { tier: 'front', app: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'NotIn', values: ['prod', 'dev', 'prod'] },
          { key: 'b', operator: 'Exists' },
          { key: 'a', operator: 'DoesNotExist' },
          { key: 'zone', operator: 'In', values: ['b', 'a'] },
        ],
      }),
      '!a,app=web,b,env notin (dev,prod),tier=front,zone in (a,b)'
    )
    assert.equal(formatSelector(undefined), '')
    assert.equal(formatSelector(null), '')
    assert.equal(formatSelector({}), '')
  })

  it('refuses invalid selectors', () => {
    assertSelectorError(
      () => formatSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      /needs at least one entry/
    )
  })

  it('round-trips through parseSelectorString with the same meaning', () => {
    const selectors: LabelSelector[] = [
      {},
      { matchLabels: { app: 'web' } },
      { matchLabels: { app: 'web', tier: 'front' } },
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
      { matchExpressions: [{ key: 'env', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] },
      { matchExpressions: [{ key: 'env', operator: 'In', values: [''] }] },
      { matchExpressions: [{ key: 'env', operator: 'In', values: ['', 'prod'] }] },
      { matchLabels: { env: '' } },
      {
        matchLabels: { 'example.com/team': 'a' },
        matchExpressions: [
          { key: 'app', operator: 'In', values: ['web'] },
          { key: 'app', operator: 'NotIn', values: ['db'] },
          { key: 'tier', operator: 'DoesNotExist' },
        ],
      },
    ]
    for (const selector of selectors) {
      const text = formatSelector(selector)
      const parsed = parseSelectorString(text)
      assertSameMatches(selector, parsed)
      assert.equal(formatSelector(parsed), text, `stable text for ${text}`)
    }
  })

  it('formats parsed text canonically', () => {
    assert.equal(
      formatSelector(parseSelectorString(' g , !f , e in ( y , x ) , c != d , a == b ')),
      'a=b,c notin (d),e in (x,y),!f,g'
    )
  })
})

describe('equalityTerms', () => {
  it('keeps matchLabels entries and In expressions, the requirements an index can answer', () => {
    const terms = equalityTerms({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['b', 'a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'gone', operator: 'DoesNotExist' },
      ],
    })
    assert.deepEqual(terms, [
      { key: 'app', values: ['web'] },
      { key: 'tier', values: ['a', 'b'] },
    ])
  })

  it('has none for a nil, empty or inequality-only selector', () => {
    assert.deepEqual(equalityTerms(undefined), [])
    assert.deepEqual(equalityTerms({}), [])
    assert.deepEqual(equalityTerms({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }), [])
  })
})
