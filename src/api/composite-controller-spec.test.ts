import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  parseCompositeControllerSpec,
  parseLabelSelector,
} from './composite-controller-spec.js'
import { ControllerSpecError } from './controller-spec-error.js'

type Json = Record<string, unknown>

/** A minimal valid spec: one parent, one child, a sync hook with a URL; `patch` is merged in. */
function spec(patch: Json = {}): Json {
  return {
    parentResource: { apiVersion: 'example.com/v1', resource: 'webs' },
    childResources: [{ apiVersion: 'v1', resource: 'pods' }],
    hooks: { sync: { webhook: { url: 'http://hook.example/sync' } } },
    ...patch,
  }
}

/** A spec whose sync hook has the given webhook. */
function withSyncWebhook(webhook: Json, hook: Json = {}): Json {
  return spec({ hooks: { sync: { ...hook, webhook } } })
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

describe('parseCompositeControllerSpec', () => {
  it('applies the CRD defaults to a minimal spec', () => {
    const parsed = parseCompositeControllerSpec(spec())
    assert.deepEqual(parsed.childResources, [
      { apiVersion: 'v1', resource: 'pods', updateMethod: 'OnDelete', statusChecks: [] },
    ])
    assert.equal(parsed.hooks.sync?.version, 'v1')
    assert.deepEqual(parsed.hooks.sync.webhook, {
      url: 'http://hook.example/sync',
      timeoutMs: 10_000,
      decodeMode: undefined,
    })
    assert.equal(DEFAULT_WEBHOOK_TIMEOUT_MS, 10_000)
    assert.equal(parsed.hooks.finalize, undefined)
    assert.equal(parsed.hooks.customize, undefined)
    assert.deepEqual(parsed.parentResource, {
      apiVersion: 'example.com/v1',
      resource: 'webs',
      labelSelector: undefined,
      ignoreStatusChanges: false,
      revisionFieldPaths: ['spec'],
    })
    assert.equal(parsed.generateSelector, false)
    assert.equal(parsed.resyncPeriodMs, undefined)
  })

  it('defaults childResources to none and an empty update method to OnDelete', () => {
    const { childResources, ...rest } = spec()
    assert.ok(childResources)
    assert.deepEqual(parseCompositeControllerSpec(rest).childResources, [])
    const parsed = parseCompositeControllerSpec(
      spec({
        childResources: [{ apiVersion: 'v1', resource: 'pods', updateStrategy: { method: '' } }],
      })
    )
    assert.equal(parsed.childResources[0]?.updateMethod, 'OnDelete')
  })

  it('reads every update method, the flags, revision paths and the hook versions', () => {
    const methods = ['OnDelete', 'Recreate', 'InPlace', 'RollingRecreate', 'RollingInPlace']
    const parsed = parseCompositeControllerSpec(
      spec({
        parentResource: {
          apiVersion: 'example.com/v1',
          resource: 'webs',
          ignoreStatusChanges: true,
          revisionHistory: { fieldPaths: ['spec.template'] },
        },
        childResources: methods.map((method) => ({
          apiVersion: 'v1',
          resource: 'pods',
          updateStrategy: { method },
        })),
        generateSelector: true,
        hooks: {
          sync: { version: 'v2', webhook: { url: 'http://h/sync' } },
          finalize: { version: '', webhook: { url: 'http://h/finalize' } },
          customize: { webhook: { url: 'http://h/customize', responseUnMarshallMode: 'strict' } },
        },
      })
    )
    assert.deepEqual(
      parsed.childResources.map((rule) => rule.updateMethod),
      methods
    )
    assert.equal(parsed.parentResource.ignoreStatusChanges, true)
    assert.deepEqual(parsed.parentResource.revisionFieldPaths, ['spec.template'])
    assert.equal(parsed.generateSelector, true)
    assert.equal(parsed.hooks.sync?.version, 'v2')
    assert.equal(parsed.hooks.finalize?.version, 'v1', 'an empty version means v1')
    assert.equal(parsed.hooks.customize?.webhook?.decodeMode, 'strict')
  })

  it('keeps a hook without a webhook as a hook with no webhook', () => {
    const parsed = parseCompositeControllerSpec(spec({ hooks: { sync: {} } }))
    assert.deepEqual(parsed.hooks.sync, { version: 'v1', webhook: undefined })
  })

  it('builds http://name.namespace:80/path from service and path', () => {
    const parsed = parseCompositeControllerSpec(
      withSyncWebhook({ service: { name: 'hooks', namespace: 'metacontroller' }, path: '/sync' })
    )
    assert.equal(parsed.hooks.sync?.webhook?.url, 'http://hooks.metacontroller:80/sync')
  })

  it('uses the service port and protocol when given', () => {
    const parsed = parseCompositeControllerSpec(
      withSyncWebhook({
        service: { name: 'hooks', namespace: 'mc', port: 8443, protocol: 'https' },
        path: '/v1/sync',
      })
    )
    assert.equal(parsed.hooks.sync?.webhook?.url, 'https://hooks.mc:8443/v1/sync')
  })

  it('prefers a full url over service and path', () => {
    const parsed = parseCompositeControllerSpec(
      withSyncWebhook({
        url: 'http://direct/sync',
        service: { name: 'hooks', namespace: 'mc' },
        path: '/other',
      })
    )
    assert.equal(parsed.hooks.sync?.webhook?.url, 'http://direct/sync')
  })

  it('refuses a webhook with neither url nor both service and path, in upstream wording', () => {
    const message =
      "invalid webhook config: must specify either a full 'url', or both 'service' and 'path'"
    for (const webhook of [
      {},
      { path: '/sync' },
      { service: { name: 'hooks', namespace: 'mc' } },
      { url: '' },
    ]) {
      assertSpecError(
        () => parseCompositeControllerSpec(withSyncWebhook(webhook)),
        'spec.hooks.sync.webhook',
        message
      )
    }
  })

  it('names the service field that is missing or wrong', () => {
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ service: { name: 'h' }, path: '/s' })),
      'spec.hooks.sync.webhook.service.namespace'
    )
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          withSyncWebhook({ service: { name: 'h', namespace: 'n', port: '80' }, path: '/s' })
        ),
      'spec.hooks.sync.webhook.service.port',
      'must be an integer'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ service: 'h', path: '/s' })),
      'spec.hooks.sync.webhook.service',
      'must be an object'
    )
  })

  it('refuses a url that does not parse', () => {
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ url: 'not a url' })),
      'spec.hooks.sync.webhook',
      /webhook URL "not a url" is not a valid URL/
    )
  })

  it('parses a Go duration timeout, and refuses one that is not a duration', () => {
    const parsed = parseCompositeControllerSpec(
      withSyncWebhook({ url: 'http://h/s', timeout: '1m30s' })
    )
    assert.equal(parsed.hooks.sync?.webhook?.timeoutMs, 90_000)
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ url: 'http://h/s', timeout: 'ten' })),
      'spec.hooks.sync.webhook.timeout',
      '"ten" is not a duration such as 10s or 1m'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ url: 'http://h/s', timeout: 10 })),
      'spec.hooks.sync.webhook.timeout',
      'must be a string'
    )
  })

  it('uses the 10 s default for a zero or negative timeout, as upstream does', () => {
    for (const timeout of ['0', '0s', '-5s']) {
      const parsed = parseCompositeControllerSpec(withSyncWebhook({ url: 'http://h/s', timeout }))
      assert.equal(parsed.hooks.sync?.webhook?.timeoutMs, 10_000, `timeout ${timeout}`)
    }
  })

  it('refuses a hook version other than v1 or v2', () => {
    assertSpecError(
      () => parseCompositeControllerSpec(withSyncWebhook({ url: 'http://h/s' }, { version: 'v3' })),
      'spec.hooks.sync.version',
      'must be v1 or v2, not "v3"'
    )
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({ hooks: { finalize: { version: 'V1', webhook: { url: 'http://h/f' } } } })
        ),
      'spec.hooks.finalize.version'
    )
  })

  it('refuses a responseUnMarshallMode other than loose or strict', () => {
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          withSyncWebhook({ url: 'http://h/s', responseUnMarshallMode: 'lenient' })
        ),
      'spec.hooks.sync.webhook.responseUnMarshallMode',
      'must be loose or strict, not "lenient"'
    )
  })

  it('refuses an unknown update method, naming the child rule', () => {
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({
            childResources: [
              { apiVersion: 'v1', resource: 'pods' },
              { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'Replace' } },
            ],
          })
        ),
      'spec.childResources[1].updateStrategy.method',
      /must be one of OnDelete, Recreate, InPlace, RollingRecreate, RollingInPlace, not "Replace"/
    )
  })

  it('reads statusChecks conditions, keeping status and reason only when given', () => {
    const parsed = parseCompositeControllerSpec(
      spec({
        childResources: [
          {
            apiVersion: 'v1',
            resource: 'pods',
            updateStrategy: {
              method: 'RollingRecreate',
              statusChecks: {
                conditions: [
                  { type: 'Ready', status: 'True' },
                  { type: 'Synced', reason: 'Ok' },
                ],
              },
            },
          },
        ],
      })
    )
    assert.deepEqual(parsed.childResources[0]?.statusChecks, [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', reason: 'Ok' },
    ])
  })

  it('refuses a statusChecks condition without a type, naming it', () => {
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({
            childResources: [
              {
                apiVersion: 'v1',
                resource: 'pods',
                updateStrategy: { method: 'RollingInPlace', statusChecks: { conditions: [{}] } },
              },
            ],
          })
        ),
      'spec.childResources[0].updateStrategy.statusChecks.conditions[0].type'
    )
  })

  it('refuses a spec without hooks with "no hooks defined"', () => {
    const { hooks, ...rest } = spec()
    assert.ok(hooks)
    assertSpecError(() => parseCompositeControllerSpec(rest), 'spec.hooks', 'no hooks defined')
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ hooks: null })),
      'spec.hooks',
      'no hooks defined'
    )
  })

  it('clamps resyncPeriodSeconds to at least one second and converts it to ms', () => {
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: 30 })).resyncPeriodMs,
      30_000
    )
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: 1 })).resyncPeriodMs,
      1000
    )
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: 0.25 })).resyncPeriodMs,
      1000
    )
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: null })).resyncPeriodMs,
      undefined
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ resyncPeriodSeconds: '30' })),
      'spec.resyncPeriodSeconds',
      'must be a number'
    )
  })

  it('clamps a zero or negative resyncPeriodSeconds to one second, as upstream does', () => {
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: 0 })).resyncPeriodMs,
      1000
    )
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: -5 })).resyncPeriodMs,
      1000
    )
  })

  it('every delay a parsed spec holds is one a Node timer can wait for: longer ones are capped', () => {
    // Node fires a timer of more than 2^31 - 1 ms (about 24.8 days) after 1 ms: a 600 h hook
    // timeout made every call time out, a 35-day resync period resynced every millisecond.
    const parsed = parseCompositeControllerSpec(
      spec({
        resyncPeriodSeconds: 35 * 86_400,
        hooks: {
          sync: {
            webhook: {
              url: 'http://hook.example/sync',
              timeout: '600h',
              etag: { enabled: true, cacheTimeoutSeconds: 1, cacheCleanupSeconds: 3_000_000 },
            },
          },
        },
      })
    )
    assert.equal(parsed.resyncPeriodMs, 2 ** 31 - 1)
    const webhook = parsed.hooks.sync?.webhook
    assert.equal(webhook?.timeoutMs, 2 ** 31 - 1)
    assert.equal(webhook.etag?.cacheCleanupMs, 2 ** 31 - 1)
    assert.equal(
      parseCompositeControllerSpec(spec({ resyncPeriodSeconds: 86_400 })).resyncPeriodMs,
      86_400_000
    )
  })

  it('a parsed spec keeps the parent selector it was given, or is refused on its field', () => {
    const parentWith = (labelSelector: unknown): Json =>
      spec({ parentResource: { apiVersion: 'example.com/v1', resource: 'webs', labelSelector } })
    // An invalid selector used to pass here and fail the controller's start, retried forever.
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          parentWith({ matchExpressions: [{ key: '"app"', operator: 'Exists' }] })
        ),
      'spec.parentResource.labelSelector',
      /invalid label key "\\"app\\""/
    )
    // JSON.parse makes `__proto__` an ordinary key; it used to be dropped, leaving an empty
    // selector that matches every parent.
    assertSpecError(
      () =>
        parseCompositeControllerSpec(parentWith(JSON.parse('{"matchLabels":{"__proto__":"x"}}'))),
      'spec.parentResource.labelSelector',
      /invalid label key "__proto__"/
    )
    const kept = parseCompositeControllerSpec(parentWith({ matchLabels: { app: 'web' } }))
    assert.deepEqual(kept.parentResource.labelSelector, { matchLabels: { app: 'web' } })
  })

  it('names the field of each structural error', () => {
    assertSpecError(() => parseCompositeControllerSpec('nope'), 'spec', 'must be an object')
    assertSpecError(
      () => parseCompositeControllerSpec({ hooks: {} }),
      'spec.parentResource',
      'must be an object'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ parentResource: { apiVersion: 'v1' } })),
      'spec.parentResource.resource',
      'is required and must be a non-empty string'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ childResources: {} })),
      'spec.childResources',
      'must be a list'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ childResources: [{ resource: 'pods' }] })),
      'spec.childResources[0].apiVersion'
    )
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({
            parentResource: {
              apiVersion: 'v1',
              resource: 'webs',
              revisionHistory: { fieldPaths: [1] },
            },
          })
        ),
      'spec.parentResource.revisionHistory.fieldPaths',
      'must be a list of strings'
    )
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({
            parentResource: { apiVersion: 'v1', resource: 'webs', ignoreStatusChanges: 'yes' },
          })
        ),
      'spec.parentResource.ignoreStatusChanges',
      'must be a boolean'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ generateSelector: 1 })),
      'spec.generateSelector',
      'must be a boolean'
    )
    assertSpecError(
      () => parseCompositeControllerSpec(spec({ hooks: { sync: 'http://h' } })),
      'spec.hooks.sync',
      'must be an object'
    )
    assertSpecError(
      () =>
        parseCompositeControllerSpec(
          spec({
            parentResource: {
              apiVersion: 'v1',
              resource: 'webs',
              labelSelector: { matchLabels: [] },
            },
          })
        ),
      'spec.parentResource.labelSelector.matchLabels',
      'must be an object'
    )
  })

  it('does not mutate its input', () => {
    const input = withSyncWebhook({ service: { name: 'h', namespace: 'n' }, path: '/s' })
    const before = structuredClone(input)
    parseCompositeControllerSpec(input)
    assert.deepEqual(input, before)
  })
})

describe('parseLabelSelector', () => {
  it('returns undefined for an absent or null selector', () => {
    assert.equal(parseLabelSelector(undefined, 'sel'), undefined)
    assert.equal(parseLabelSelector(null, 'sel'), undefined)
  })

  it('keeps only the parts that were given', () => {
    assert.deepEqual(parseLabelSelector({}, 'sel'), {})
    assert.deepEqual(parseLabelSelector({ matchLabels: { app: 'web' } }, 'sel'), {
      matchLabels: { app: 'web' },
    })
    assert.deepEqual(parseLabelSelector({ matchExpressions: [] }, 'sel'), { matchExpressions: [] })
  })

  it('reads match expressions with and without values', () => {
    assert.deepEqual(
      parseLabelSelector(
        {
          matchLabels: {},
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['front', 'back'] },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
        'sel'
      ),
      {
        matchLabels: {},
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['front', 'back'] },
          { key: 'legacy', operator: 'DoesNotExist' },
        ],
      }
    )
  })

  it('names the field of each shape error under the given path', () => {
    assertSpecError(() => parseLabelSelector('app=web', 'p.sel'), 'p.sel', 'must be an object')
    assertSpecError(
      () => parseLabelSelector({ matchLabels: { app: 1 } }, 'p.sel'),
      'p.sel.matchLabels.app',
      'must be a string'
    )
    assertSpecError(
      () => parseLabelSelector({ matchExpressions: {} }, 'p.sel'),
      'p.sel.matchExpressions',
      'must be a list'
    )
    assertSpecError(
      () => parseLabelSelector({ matchExpressions: ['x'] }, 'p.sel'),
      'p.sel.matchExpressions[0]',
      'must be an object'
    )
    assertSpecError(
      () => parseLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Gt' }] }, 'p.sel'),
      'p.sel.matchExpressions[0].operator',
      'must be In, NotIn, Exists or DoesNotExist, not "Gt"'
    )
    assertSpecError(
      () => parseLabelSelector({ matchExpressions: [{ key: 'a' }] }, 'p.sel'),
      'p.sel.matchExpressions[0].operator',
      'is required and must be a non-empty string'
    )
    assertSpecError(
      () =>
        parseLabelSelector(
          { matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] },
          'p.sel'
        ),
      'p.sel.matchExpressions[0].values',
      'must be a list of strings'
    )
    assertSpecError(
      () =>
        parseLabelSelector(
          {
            matchExpressions: [{ key: 'a', operator: 'In', values: ['x'] }, { operator: 'Exists' }],
          },
          'p.sel'
        ),
      'p.sel.matchExpressions[1].key'
    )
  })
})
