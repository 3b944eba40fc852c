// Edge cases of response decoding beyond the golden files: Go's null handling, strictness scope,
// message wording, and related-rule validation.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HookResponseError } from '../hook-response-error.js'
import type { HookResponseProblem, HookResponseSource } from '../hook-response-error.js'
import {
  decodeCompositeSyncResponse,
  decodeCustomizeResponse,
  decodeDecoratorSyncResponse,
} from './decode-response.js'
import { formatJsonPath } from './response-reader.js'

const STRICT: HookResponseSource = { version: 'v2', hook: 'sync', mode: 'strict' }
const LOOSE: HookResponseSource = { version: 'v1', hook: 'sync', mode: 'loose' }
const CUSTOMIZE: HookResponseSource = { version: 'v2', hook: 'customize', mode: 'strict' }

/** Asserts that decoding throws a HookResponseError of a problem kind whose message matches. */
function assertFails(run: () => unknown, problem: HookResponseProblem, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof HookResponseError, String(error))
    assert.equal(error.name, 'HookResponseError')
    assert.equal(error.problem, problem, error.message)
    assert.match(error.message, message)
    return true
  })
}

const child = (name: string): string =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"}}`

describe('decodeCompositeSyncResponse', () => {
  it('reports syntax errors with upstream wording, whatever the mode', () => {
    for (const source of [STRICT, LOOSE]) {
      assertFails(
        () => decodeCompositeSyncResponse('{"children": [', source),
        'syntax',
        new RegExp(
          `^can't unmarshal webhookResponse \\(version: ${source.version}, type: sync\\): invalid JSON: .+; the hook must answer with a single JSON object`
        )
      )
      assertFails(
        () => decodeCompositeSyncResponse('  \n', source),
        'syntax',
        /the response body is empty/
      )
    }
  })

  it('refuses a body that is not an object, but accepts null like Go', () => {
    assertFails(
      () => decodeCompositeSyncResponse('[]', LOOSE),
      'type',
      /the response body must be a JSON object, got an array/
    )
    assertFails(() => decodeCompositeSyncResponse('"ok"', LOOSE), 'type', /got the string "ok"/)
    assert.deepEqual(decodeCompositeSyncResponse('null', STRICT).response, {
      status: null,
      children: [],
      resyncAfterMs: 0,
      finalized: false,
    })
  })

  it('treats null fields as absent', () => {
    const { response } = decodeCompositeSyncResponse(
      '{"status":null,"children":null,"resyncAfterSeconds":null,"finalized":null}',
      STRICT
    )
    assert.deepEqual(response, { status: null, children: [], resyncAfterMs: 0, finalized: false })
  })

  it('converts resyncAfterSeconds to ms, with zero or negative meaning none', () => {
    const ms = (value: string): number =>
      decodeCompositeSyncResponse(`{"resyncAfterSeconds":${value}}`, STRICT).response.resyncAfterMs
    assert.equal(ms('1.5'), 1500)
    assert.equal(ms('2'), 2000)
    assert.equal(ms('0'), 0)
    assert.equal(ms('-3'), 0)
    assertFails(
      () => ms('1e400'),
      'type',
      /"resyncAfterSeconds" must be a number within the float64 range/
    )
  })

  it('skips every null child and keeps the rest in order', () => {
    const { response, warnings } = decodeCompositeSyncResponse(
      `{"children":[null,${child('a')},null,${child('b')}]}`,
      STRICT
    )
    assert.deepEqual(
      response.children.map((c) => c.metadata.name),
      ['a', 'b']
    )
    assert.deepEqual(warnings, [
      'skipped the null entry "children[0]"',
      'skipped the null entry "children[2]"',
    ])
  })

  it('requires apiVersion, kind and metadata on every child', () => {
    assertFails(
      () => decodeCompositeSyncResponse('{"children":["a"]}', LOOSE),
      'type',
      /"children\[0\]" must be an object with "apiVersion", "kind" and "metadata", got the string "a"/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"children":[{"kind":"Pod","metadata":{}}]}', LOOSE),
      'type',
      /"children\[0\]\.apiVersion" must be a non-empty string such as "v1" or "apps\/v1", got nothing/
    )
    assertFails(
      () =>
        decodeCompositeSyncResponse(
          '{"children":[{"apiVersion":"v1","kind":"","metadata":{}}]}',
          LOOSE
        ),
      'type',
      /"children\[0\]\.kind" must be a non-empty string such as "ConfigMap", got the string ""/
    )
    assertFails(
      () =>
        decodeCompositeSyncResponse(
          '{"children":[{"apiVersion":"v1","kind":7,"metadata":{}}]}',
          LOOSE
        ),
      'type',
      /"children\[0\]\.kind" must be a non-empty string .*got the number 7/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"children":[{"apiVersion":"v1","kind":"Pod"}]}', LOOSE),
      'type',
      /"children\[0\]\.metadata" must be an object with "name" or "generateName", got nothing/
    )
  })

  it('keeps child bodies and status free-form', () => {
    const body =
      '{"status":{"anything":{"deep":[1,2.5,"x",null]}},' +
      '"children":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","Weird":1},"extra":true}]}'
    const { response, warnings } = decodeCompositeSyncResponse(body, STRICT)
    assert.deepEqual(warnings, [])
    assert.deepEqual(response.status, { anything: { deep: [1, 2.5, 'x', null] } })
    assert.equal(response.children[0]?.['extra'], true)
  })

  it('lists several strict issues like a Go aggregate', () => {
    assertFails(
      () =>
        decodeCompositeSyncResponse(
          '{"foo":1,"Status":{},"finalized":true,"finalized":false}',
          STRICT
        ),
      'strict',
      /\(type: sync, mode: strict\): \[unknown field "foo", unknown field "Status", duplicate field "finalized"\]; remove or rename/
    )
  })

  it('checks duplicates where upstream does: the top level and all of status', () => {
    assertFails(
      () => decodeCompositeSyncResponse('{"status":{"a":{"b":1,"b":2}}}', STRICT),
      'strict',
      /duplicate field "status\.a\.b"/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"status":{"list":[{"x":1,"x":1}]}}', STRICT),
      'strict',
      /duplicate field "status\.list\[0\]\.x"/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"finalized":true,"fin\\u0061lized":true}', STRICT),
      'strict',
      /duplicate field "finalized"/
    )
    const insideChild =
      '{"children":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}]}'
    assert.equal(
      decodeCompositeSyncResponse(insideChild, STRICT).response.children[0]?.metadata.name,
      'b'
    )
    const insideUnknown = '{"extra":{"x":1,"x":2},"extra":{}}'
    assertFails(
      () => decodeCompositeSyncResponse(insideUnknown, STRICT),
      'strict',
      /\): unknown field "extra"; remove/
    )
  })

  it('names a key repeated many times once, and at most 20 issues, counting the rest', () => {
    const repeated = `{"status":{"a":{${Array(50).fill('"x":1').join(',')}}}}`
    assert.deepEqual(decodeCompositeSyncResponse(repeated, LOOSE).warnings, [
      'duplicate field "status.a.x"',
    ])
    const objects = Array.from({ length: 30 }, (_, i) => `{"k${i}":1,"k${i}":2}`).join(',')
    const { warnings } = decodeCompositeSyncResponse(`{"status":{"l":[${objects}]}}`, LOOSE)
    assert.equal(warnings.length, 21)
    assert.equal(warnings[19], 'duplicate field "status.l[19].k19"')
    assert.equal(warnings[20], '10 more')
    assertFails(
      () => decodeCompositeSyncResponse(`{"status":{"l":[${objects}]}}`, STRICT),
      'strict',
      /duplicate field "status\.l\[19\]\.k19", 10 more\]; remove/
    )
  })

  it('names the hook in messages', () => {
    assertFails(
      () =>
        decodeCompositeSyncResponse('{"x":1}', { version: 'v2', hook: 'finalize', mode: 'strict' }),
      'strict',
      /^strict validation failed for v2 webhookResponse \(type: finalize, mode: strict\)/
    )
  })

  it('exposes the source and issues on the error', () => {
    try {
      decodeCompositeSyncResponse('{"x":1}', STRICT)
      assert.fail('expected an error')
    } catch (error) {
      assert.ok(error instanceof HookResponseError)
      assert.equal(error.version, 'v2')
      assert.equal(error.hook, 'sync')
      assert.equal(error.mode, 'strict')
      assert.deepEqual(error.issues, ['unknown field "x"'])
    }
  })
})

describe('decodeDecoratorSyncResponse', () => {
  it('decodes partial label and annotation updates', () => {
    const { response } = decodeDecoratorSyncResponse(
      '{"labels":{"a":"1","b":null},"annotations":null,"status":{"ok":true},"attachments":null}',
      STRICT
    )
    assert.deepEqual(response, {
      labels: { a: '1', b: null },
      annotations: {},
      status: { ok: true },
      attachments: [],
      resyncAfterMs: 0,
      finalized: false,
    })
  })

  it('refuses label and annotation values that are not strings or null', () => {
    assertFails(
      () => decodeDecoratorSyncResponse('{"annotations":{"example.com/x":true}}', LOOSE),
      'type',
      /"annotations\["example\.com\/x"\]" must be a string \(to set the key\) or null \(to remove it\), got true/
    )
    assertFails(
      () => decodeDecoratorSyncResponse('{"labels":["a"]}', LOOSE),
      'type',
      /"labels" must be an object or null, got an array/
    )
  })

  it('treats duplicate label keys as strict issues', () => {
    assertFails(
      () => decodeDecoratorSyncResponse('{"labels":{"a":"1","a":"2"}}', STRICT),
      'strict',
      /duplicate field "labels\.a"/
    )
    const { response, warnings } = decodeDecoratorSyncResponse(
      '{"labels":{"a":"1","a":"2"}}',
      LOOSE
    )
    assert.deepEqual(response.labels, { a: '2' })
    assert.deepEqual(warnings, ['duplicate field "labels.a"'])
  })

  it('knows the decorator fields and refuses the composite ones', () => {
    assertFails(
      () => decodeDecoratorSyncResponse('{"children":[]}', STRICT),
      'strict',
      /unknown field "children"/
    )
    assertFails(
      () =>
        decodeDecoratorSyncResponse('{"attachments":[{"kind":"Service","metadata":{}}]}', LOOSE),
      'type',
      /"attachments\[0\]\.apiVersion" must be a non-empty string/
    )
  })
})

describe('decodeCustomizeResponse', () => {
  const rules = (body: string): unknown =>
    decodeCustomizeResponse(`{"relatedResources":[${body}]}`, CUSTOMIZE).response.relatedResources

  it('decodes an absent or null rule list as no rules', () => {
    assert.deepEqual(decodeCustomizeResponse('{}', CUSTOMIZE).response, { relatedResources: [] })
    assert.deepEqual(decodeCustomizeResponse('{"relatedResources":null}', CUSTOMIZE).response, {
      relatedResources: [],
    })
  })

  it('skips null rules with a warning', () => {
    const { response, warnings } = decodeCustomizeResponse(
      '{"relatedResources":[null,{"apiVersion":"v1","resource":"configmaps"}]}',
      CUSTOMIZE
    )
    assert.deepEqual(response.relatedResources, [{ apiVersion: 'v1', resource: 'configmaps' }])
    assert.deepEqual(warnings, ['skipped the null entry "relatedResources[0]"'])
  })

  it('normalises empty namespace and names away, and keeps an empty selector', () => {
    assert.deepEqual(
      rules(
        '{"apiVersion":"v1","resource":"configmaps","namespace":"","names":[],"labelSelector":{}}'
      ),
      [{ apiVersion: 'v1', resource: 'configmaps', labelSelector: {} }]
    )
    assert.deepEqual(
      rules(
        '{"apiVersion":"v1","resource":"configmaps","labelSelector":{"matchLabels":{"a":"b"}},"namespace":"x"}'
      ),
      [
        {
          apiVersion: 'v1',
          resource: 'configmaps',
          labelSelector: { matchLabels: { a: 'b' } },
          namespace: 'x',
        },
      ]
    )
  })

  it('refuses the combinations of spec §2.5', () => {
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"configmaps","names":["a"],"labelSelector":{}}'),
      'invalid',
      /"relatedResources\[0\]": "names" cannot be combined with "labelSelector": select related objects either by name/
    )
    assertFails(
      () =>
        rules(
          '{"apiVersion":"v1","resource":"configmaps","names":["a"],"namespaceSelector":{"matchLabels":{"t":"a"}}}'
        ),
      'invalid',
      /"names" cannot be combined with "namespaceSelector"/
    )
    assertFails(
      () =>
        rules('{"apiVersion":"v1","resource":"configmaps","namespace":"x","namespaceSelector":{}}'),
      'invalid',
      /"namespace" cannot be combined with "namespaceSelector"/
    )
  })

  it('requires apiVersion and resource', () => {
    assertFails(
      () => rules('{"resource":"configmaps"}'),
      'invalid',
      /"relatedResources\[0\]\.apiVersion": required/
    )
    assertFails(
      () => rules('{"apiVersion":"v1","resource":""}'),
      'invalid',
      /"relatedResources\[0\]\.resource": required: the plural resource name/
    )
  })

  it('validates selectors: operators, values and label syntax', () => {
    assertFails(
      () =>
        rules(
          '{"apiVersion":"v1","resource":"pods","labelSelector":{"matchExpressions":[{"key":"a","operator":"in","values":["x"]}]}}'
        ),
      'invalid',
      /"relatedResources\[0\]\.labelSelector\.matchExpressions\[0\]\.operator": must be In, NotIn, Exists or DoesNotExist \(case-sensitive\), got the string "in"/
    )
    assertFails(
      () =>
        rules(
          '{"apiVersion":"v1","resource":"pods","labelSelector":{"matchExpressions":[{"key":"a","operator":"In"}]}}'
        ),
      'invalid',
      /"relatedResources\[0\]\.labelSelector": matchExpressions\[0\] \(key "a"\): operator In needs at least one entry in "values"/
    )
    assertFails(
      () =>
        rules(
          '{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabels":{"bad key":"x"}}}'
        ),
      'invalid',
      /invalid label key "bad key"/
    )
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabels":{"a":1}}}'),
      'type',
      /"relatedResources\[0\]\.labelSelector\.matchLabels\.a" must be a string, got the number 1/
    )
    assertFails(
      () =>
        rules('{"apiVersion":"v1","resource":"pods","labelSelector":{"matchExpressions":[null]}}'),
      'type',
      /"relatedResources\[0\]\.labelSelector\.matchExpressions\[0\]" must be an object/
    )
  })

  it('checks types of rule fields', () => {
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"pods","names":["a",null]}'),
      'type',
      /"relatedResources\[0\]\.names\[1\]" must be a string, got null/
    )
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"pods","names":"a"}'),
      'type',
      /"relatedResources\[0\]\.names" must be an array or null/
    )
    assertFails(
      () => rules('"configmaps"'),
      'type',
      /"relatedResources\[0\]" must be an object or null/
    )
  })

  it('checks unknown and duplicate fields inside rules and selectors', () => {
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"pods","nmes":["a"]}'),
      'strict',
      /unknown field "relatedResources\[0\]\.nmes"/
    )
    assertFails(
      () => rules('{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabel":{"a":"b"}}}'),
      'strict',
      /unknown field "relatedResources\[0\]\.labelSelector\.matchLabel"/
    )
    assertFails(
      () =>
        rules(
          '{"apiVersion":"v1","resource":"pods","labelSelector":{"matchLabels":{"a":"b","a":"c"}}}'
        ),
      'strict',
      /duplicate field "relatedResources\[0\]\.labelSelector\.matchLabels\.a"/
    )
    const loose = decodeCustomizeResponse(
      '{"relatedResources":[{"apiVersion":"v1","resource":"pods","Names":["a"]}]}',
      { version: 'v1', hook: 'customize', mode: 'loose' }
    )
    assert.deepEqual(loose.response.relatedResources, [{ apiVersion: 'v1', resource: 'pods' }])
    assert.deepEqual(loose.warnings, ['unknown field "relatedResources[0].Names"'])
  })
})

describe('formatJsonPath', () => {
  it('uses dots for identifiers and brackets for indexes and other keys', () => {
    assert.equal(formatJsonPath([]), '')
    assert.equal(formatJsonPath(['status', 'a_b']), 'status.a_b')
    assert.equal(formatJsonPath(['children', 3, 'kind']), 'children[3].kind')
    assert.equal(
      formatJsonPath(['labels', 'app.kubernetes.io/name']),
      'labels["app.kubernetes.io/name"]'
    )
  })
})

describe('hook events (the `events` extension)', () => {
  it('reads events in both modes, defaulting the type to Normal', () => {
    for (const source of [STRICT, LOOSE]) {
      const { response } = decodeCompositeSyncResponse(
        '{"events":[{"type":"Warning","reason":"QuotaLow","message":"m"},{"reason":"Done"}]}',
        source
      )
      assert.deepEqual(response.events, [
        { type: 'Warning', reason: 'QuotaLow', message: 'm' },
        { type: 'Normal', reason: 'Done', message: '' },
      ])
    }
    const decorator = decodeDecoratorSyncResponse('{"events":[{"reason":"Tagged"}]}', STRICT)
    assert.deepEqual(decorator.response.events, [{ type: 'Normal', reason: 'Tagged', message: '' }])
  })

  it('leaves events out when the response has none', () => {
    const { response } = decodeCompositeSyncResponse('{"events":null}', STRICT)
    assert.equal(response.events, undefined)
  })

  it('refuses an unknown type, a missing reason and unknown fields in strict mode', () => {
    assertFails(
      () => decodeCompositeSyncResponse('{"events":[{"type":"Error","reason":"X"}]}', STRICT),
      'invalid',
      /events\[0\]\.type.*Normal or Warning/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"events":[{"message":"no reason"}]}', STRICT),
      'invalid',
      /events\[0\]\.reason.*required/
    )
    assertFails(
      () => decodeCompositeSyncResponse('{"events":[{"reason":"X","note":1}]}', STRICT),
      'strict',
      /note/
    )
  })
})
