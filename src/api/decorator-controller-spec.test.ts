import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileAnnotationSelector } from '../core/annotation-selector.js'
import { ControllerSpecError } from './controller-spec-error.js'
import {
  DECORATOR_CONTROLLER_ANNOTATION,
  decoratorFinalizer,
  parseDecoratorControllerSpec,
} from './decorator-controller-spec.js'

type Json = Record<string, unknown>

/** A minimal valid spec: one target resource and a sync hook with a URL; `patch` is merged in. */
function spec(patch: Json = {}): Json {
  return {
    resources: [{ apiVersion: 'apps/v1', resource: 'deployments' }],
    hooks: { sync: { webhook: { url: 'http://hook.example/sync' } } },
    ...patch,
  }
}

/** A spec whose only resource rule has the given extra fields. */
function withResource(extra: Json): Json {
  return spec({ resources: [{ apiVersion: 'apps/v1', resource: 'deployments', ...extra }] })
}

/** Asserts that parsing fails with a ControllerSpecError for `field` whose message matches. */
function assertSpecError(run: () => unknown, field: string, message?: string | RegExp): void {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof ControllerSpecError, `expected a ControllerSpecError for ${field}`)
  assert.equal(caught.field, field)
  assert.ok(caught.message.startsWith(`${field}: `), 'the message starts with the field')
  if (typeof message === 'string') assert.equal(caught.message, `${field}: ${message}`)
  else if (message !== undefined) assert.match(caught.message, message)
}

/** Asserts the error for a spec, so that the many error cases below stay one line each. */
function assertRefused(input: unknown, field: string, message?: string | RegExp): void {
  assertSpecError(() => parseDecoratorControllerSpec(input), field, message)
}

describe('parseDecoratorControllerSpec', () => {
  it('applies the CRD defaults to a minimal spec', () => {
    const parsed = parseDecoratorControllerSpec(spec())
    assert.deepEqual(parsed, {
      resources: [
        {
          apiVersion: 'apps/v1',
          resource: 'deployments',
          labelSelector: undefined,
          annotationSelector: undefined,
          ignoreStatusChanges: false,
        },
      ],
      attachments: [],
      hooks: {
        sync: {
          version: 'v1',
          webhook: { url: 'http://hook.example/sync', timeoutMs: 10_000, decodeMode: undefined },
        },
        finalize: undefined,
        customize: undefined,
      },
      resyncPeriodMs: undefined,
    })
  })

  it('defaults attachments to none and an absent or empty update method to OnDelete', () => {
    assert.deepEqual(parseDecoratorControllerSpec(spec({ attachments: null })).attachments, [])
    const parsed = parseDecoratorControllerSpec(
      spec({
        attachments: [
          { apiVersion: 'v1', resource: 'configmaps' },
          { apiVersion: 'v1', resource: 'secrets', updateStrategy: {} },
          { apiVersion: 'v1', resource: 'services', updateStrategy: { method: '' } },
        ],
      })
    )
    assert.deepEqual(parsed.attachments, [
      { apiVersion: 'v1', resource: 'configmaps', updateMethod: 'OnDelete', statusChecks: [] },
      { apiVersion: 'v1', resource: 'secrets', updateMethod: 'OnDelete', statusChecks: [] },
      { apiVersion: 'v1', resource: 'services', updateMethod: 'OnDelete', statusChecks: [] },
    ])
  })

  it('accepts every update method of the enum, the rolling ones included', () => {
    const methods = ['OnDelete', 'Recreate', 'InPlace', 'RollingRecreate', 'RollingInPlace']
    const parsed = parseDecoratorControllerSpec(
      spec({
        attachments: methods.map((method) => ({
          apiVersion: 'v1',
          resource: 'pods',
          updateStrategy: { method },
        })),
      })
    )
    assert.deepEqual(
      parsed.attachments.map((rule) => rule.updateMethod),
      methods
    )
  })

  it('reads selectors, ignoreStatusChanges, every hook and resyncPeriodSeconds', () => {
    const parsed = parseDecoratorControllerSpec(
      spec({
        resources: [
          {
            apiVersion: 'v1',
            resource: 'services',
            labelSelector: { matchLabels: { app: 'web' } },
            annotationSelector: {
              matchAnnotations: { 'example.com/expose': 'true' },
              matchExpressions: [{ key: 'example.com/skip', operator: 'DoesNotExist' }],
            },
            ignoreStatusChanges: true,
          },
        ],
        hooks: {
          sync: { version: 'v2', webhook: { url: 'http://h/sync' } },
          finalize: { webhook: { service: { name: 'hooks', namespace: 'mc' }, path: '/fin' } },
          customize: { webhook: { url: 'http://h/customize', timeout: '2s' } },
        },
        resyncPeriodSeconds: 30,
      })
    )
    assert.deepEqual(parsed.resources[0], {
      apiVersion: 'v1',
      resource: 'services',
      labelSelector: { matchLabels: { app: 'web' } },
      annotationSelector: {
        matchAnnotations: { 'example.com/expose': 'true' },
        matchExpressions: [{ key: 'example.com/skip', operator: 'DoesNotExist' }],
      },
      ignoreStatusChanges: true,
    })
    assert.equal(parsed.hooks.sync?.version, 'v2')
    assert.equal(parsed.hooks.finalize?.webhook?.url, 'http://hooks.mc:80/fin')
    assert.equal(parsed.hooks.customize?.webhook?.timeoutMs, 2000)
    assert.equal(parsed.resyncPeriodMs, 30_000)
  })

  it('keeps two resource rules with the same group and kind, in spec order', () => {
    // The engine keys selectors by group + kind (the version is ignored), so there the later rule
    // wins; the parser's job is only to keep the list and its order intact.
    const parsed = parseDecoratorControllerSpec(
      spec({
        resources: [
          {
            apiVersion: 'apps/v1',
            resource: 'deployments',
            labelSelector: { matchLabels: { a: 'b' } },
          },
          { apiVersion: 'apps/v1beta1', resource: 'deployments', ignoreStatusChanges: true },
        ],
      })
    )
    assert.deepEqual(
      parsed.resources.map((rule) => [rule.apiVersion, rule.ignoreStatusChanges]),
      [
        ['apps/v1', false],
        ['apps/v1beta1', true],
      ]
    )
    assert.deepEqual(parsed.resources[1]?.labelSelector, undefined)
  })

  it('accepts free-text annotation values, which no label selector would', () => {
    const note = 'Decorated by team-a; see https://example.com/runbook. ' + 'x'.repeat(100)
    const parsed = parseDecoratorControllerSpec(
      withResource({
        annotationSelector: {
          matchAnnotations: { 'example.com/note': note },
          matchExpressions: [
            { key: 'example.com/owner', operator: 'In', values: ['team a', '{"team":"a"}'] },
            { key: 'example.com/state', operator: 'NotIn', values: ['not ready'] },
            { key: 'example.com/decorate', operator: 'Exists' },
          ],
        },
      })
    )
    const matches = compileAnnotationSelector(parsed.resources[0]?.annotationSelector)
    const annotations = {
      'example.com/note': note,
      'example.com/owner': '{"team":"a"}',
      'example.com/decorate': '',
    }
    assert.equal(matches(annotations), true)
    assert.equal(matches({ ...annotations, 'example.com/state': 'not ready' }), false)
    assert.equal(matches({ ...annotations, 'example.com/owner': 'team b' }), false)
    assertRefused(
      withResource({ labelSelector: { matchLabels: { 'example.com/note': note } } }),
      'spec.resources[0].labelSelector',
      /invalid label value/
    )
  })

  it('refuses a spec without resources, or with none', () => {
    const { resources, ...rest } = spec()
    assert.ok(resources)
    assertRefused(rest, 'spec.resources', 'is required and must list at least one resource')
    assertRefused(spec({ resources: null }), 'spec.resources', /is required/)
    assertRefused(spec({ resources: {} }), 'spec.resources', 'must be a list')
    assertRefused(spec({ resources: [] }), 'spec.resources', 'must list at least one resource')
  })

  it('names the field of each resource rule error', () => {
    assertRefused(spec({ resources: ['pods'] }), 'spec.resources[0]', 'must be an object')
    assertRefused(
      spec({ resources: [{ resource: 'pods' }] }),
      'spec.resources[0].apiVersion',
      'is required and must be a non-empty string'
    )
    assertRefused(
      spec({
        resources: [
          { apiVersion: 'v1', resource: 'pods' },
          { apiVersion: 'v1', resource: '' },
        ],
      }),
      'spec.resources[1].resource',
      'is required and must be a non-empty string'
    )
    assertRefused(
      withResource({ ignoreStatusChanges: 'yes' }),
      'spec.resources[0].ignoreStatusChanges',
      'must be a boolean'
    )
  })

  it('names the field of each label selector error, shape and semantics', () => {
    const at = 'spec.resources[0].labelSelector'
    assertRefused(withResource({ labelSelector: 'app=web' }), at, 'must be an object')
    assertRefused(
      withResource({ labelSelector: { matchLabels: [] } }),
      `${at}.matchLabels`,
      'must be an object'
    )
    assertRefused(
      withResource({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'Gt' }] } }),
      `${at}.matchExpressions[0].operator`,
      'must be In, NotIn, Exists or DoesNotExist, not "Gt"'
    )
    assertRefused(
      withResource({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }),
      at,
      /invalid label selector: .*operator In needs at least one entry in "values"/
    )
    assertRefused(
      withResource({ labelSelector: { matchLabels: { 'bad key': 'x' } } }),
      at,
      /invalid label key "bad key"/
    )
  })

  it('a parsed spec keeps the selectors it was given: a __proto__ key is refused, not dropped', () => {
    // JSON.parse makes `__proto__` an ordinary key; an assignment used to drop it, leaving an
    // empty selector that decorates every object.
    const parsed = (text: string): Json => JSON.parse(text) as Json
    assertRefused(
      withResource({ labelSelector: parsed('{"matchLabels":{"__proto__":"x"}}') }),
      'spec.resources[0].labelSelector',
      /invalid label key "__proto__"/
    )
    assertRefused(
      withResource({ annotationSelector: parsed('{"matchAnnotations":{"__proto__":"x"}}') }),
      'spec.resources[0].annotationSelector',
      /invalid annotation key "__proto__"/
    )
  })

  it('names the field of each annotation selector error, shape and semantics', () => {
    const at = 'spec.resources[0].annotationSelector'
    assertRefused(withResource({ annotationSelector: [] }), at, 'must be an object')
    assertRefused(
      withResource({ annotationSelector: { matchAnnotations: 'a=b' } }),
      `${at}.matchAnnotations`,
      'must be an object'
    )
    assertRefused(
      withResource({ annotationSelector: { matchAnnotations: { a: true } } }),
      `${at}.matchAnnotations.a`,
      'must be a string'
    )
    assertRefused(
      withResource({ annotationSelector: { matchExpressions: { key: 'a' } } }),
      `${at}.matchExpressions`,
      'must be a list'
    )
    assertRefused(
      withResource({ annotationSelector: { matchExpressions: [null] } }),
      `${at}.matchExpressions[0]`,
      'must be an object'
    )
    assertRefused(
      withResource({ annotationSelector: { matchExpressions: [{ operator: 'Exists' }] } }),
      `${at}.matchExpressions[0].key`,
      'is required and must be a non-empty string'
    )
    assertRefused(
      withResource({
        annotationSelector: { matchExpressions: [{ key: 'a', operator: 'In', values: 'x' }] },
      }),
      `${at}.matchExpressions[0].values`,
      'must be a list of strings'
    )
    assertRefused(
      withResource({
        annotationSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      }),
      at,
      /invalid annotation selector: .*operator Exists takes no values/
    )
    assertRefused(
      withResource({ annotationSelector: { matchAnnotations: { 'a b': 'x' } } }),
      at,
      /invalid annotation key "a b"/
    )
  })

  it('names the field of each attachment error', () => {
    assertRefused(spec({ attachments: {} }), 'spec.attachments', 'must be a list')
    assertRefused(
      spec({ attachments: [{ resource: 'configmaps' }] }),
      'spec.attachments[0].apiVersion',
      'is required and must be a non-empty string'
    )
    assertRefused(
      spec({ attachments: [{ apiVersion: 'v1', resource: 'pods', updateStrategy: 'InPlace' }] }),
      'spec.attachments[0].updateStrategy',
      'must be an object'
    )
    assertRefused(
      spec({
        attachments: [
          { apiVersion: 'v1', resource: 'pods' },
          { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'Replace' } },
        ],
      }),
      'spec.attachments[1].updateStrategy.method',
      /must be one of OnDelete, Recreate, InPlace, RollingRecreate, RollingInPlace, not "Replace"/
    )
  })

  it('refuses a spec without hooks with "no hooks defined", and names hook errors', () => {
    const { hooks, ...rest } = spec()
    assert.ok(hooks)
    assertRefused(rest, 'spec.hooks', 'no hooks defined')
    assertRefused(spec({ hooks: null }), 'spec.hooks', 'no hooks defined')
    assertRefused(spec({ hooks: 'sync' }), 'spec.hooks', 'must be an object')
    assertRefused(spec({ hooks: { sync: 'http://h' } }), 'spec.hooks.sync', 'must be an object')
    assertRefused(
      spec({ hooks: { finalize: { version: 'v3' } } }),
      'spec.hooks.finalize.version',
      'must be v1 or v2, not "v3"'
    )
    assertRefused(
      spec({ hooks: { customize: { webhook: { path: '/c' } } } }),
      'spec.hooks.customize.webhook',
      "invalid webhook config: must specify either a full 'url', or both 'service' and 'path'"
    )
    assertRefused(
      spec({ hooks: { sync: { webhook: { url: 'http://h/s', timeout: 'soon' } } } }),
      'spec.hooks.sync.webhook.timeout',
      '"soon" is not a duration such as 10s or 1m'
    )
  })

  it('keeps a hook without a webhook as a hook with no webhook', () => {
    const parsed = parseDecoratorControllerSpec(spec({ hooks: { finalize: {} } }))
    assert.deepEqual(parsed.hooks, {
      sync: undefined,
      finalize: { version: 'v1', webhook: undefined },
      customize: undefined,
    })
  })

  it('clamps resyncPeriodSeconds to at least one second, and refuses a non-number', () => {
    for (const [seconds, ms] of [
      [0, 1000],
      [-5, 1000],
      [0.25, 1000],
      [2, 2000],
    ] as const) {
      assert.equal(
        parseDecoratorControllerSpec(spec({ resyncPeriodSeconds: seconds })).resyncPeriodMs,
        ms
      )
    }
    assertRefused(
      spec({ resyncPeriodSeconds: '30' }),
      'spec.resyncPeriodSeconds',
      'must be a number'
    )
  })

  it('refuses a spec that is not an object', () => {
    assertRefused('nope', 'spec', 'must be an object')
    assertRefused(null, 'spec', 'must be an object')
  })

  it('does not mutate its input', () => {
    const input = withResource({
      labelSelector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['x', 'y'] }] },
      annotationSelector: { matchAnnotations: { b: 'free text' } },
    })
    const before = structuredClone(input)
    parseDecoratorControllerSpec(input)
    assert.deepEqual(input, before)
  })
})

describe('decorator names', () => {
  it('builds the finalizer from the controller name', () => {
    assert.equal(
      decoratorFinalizer('service-per-pod'),
      'metacontroller.io/decoratorcontroller-service-per-pod'
    )
  })

  it('names the attachment marker annotation', () => {
    assert.equal(DECORATOR_CONTROLLER_ANNOTATION, 'metacontroller.k8s.io/decorator-controller')
  })
})
