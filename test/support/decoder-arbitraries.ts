/**
 * Input generators for the decoder properties: valid inputs of each decoder, arbitrary ones,
 * and valid ones mutated a few steps. The unit tests (`*.property.test.ts`) and the long fuzz
 * run (`bench/property-fuzz.ts`) draw from these same generators.
 *
 * @module
 */
import fc from 'fast-check'
import { stringify as toYaml } from 'yaml'
import type { JsonObject, KubeObject } from '../../src/core/kube-object.js'
import type {
  CompositeSyncResponse,
  CustomizeResponse,
  DecoratorSyncResponse,
  HookEvent,
  LabelSelectorSpec,
  RelatedResourceRule,
} from '../../src/api/hook-model.js'

/** A JSON value, as `JSON.parse` returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A JSON object. */
// eslint-disable-next-line @typescript-eslint/consistent-indexed-object-style -- a recursive type needs the index signature
export interface JsonMap {
  [key: string]: Json
}

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>

/**
 * Field names the decoders know, plus names that are special in JavaScript; a mutation that adds
 * a key draws from these most of the time, so it lands on fields a decoder reads.
 */
const FIELD_NAMES = [
  ...['apiVersion', 'kind', 'metadata', 'name', 'namespace', 'labels', 'annotations', 'status'],
  ...['children', 'attachments', 'resyncAfterSeconds', 'finalized', 'events', 'type', 'reason'],
  ...['message', 'relatedResources', 'resource', 'labelSelector', 'namespaceSelector', 'names'],
  ...['matchLabels', 'matchExpressions', 'matchAnnotations', 'key', 'operator', 'values'],
  ...['parentResource', 'childResources', 'resources', 'annotationSelector', 'hooks', 'sync'],
  ...['finalize', 'customize', 'webhook', 'url', 'service', 'path', 'port', 'protocol'],
  ...['timeout', 'version', 'responseUnMarshallMode', 'updateStrategy', 'method'],
  ...['statusChecks', 'conditions', 'resyncPeriodSeconds', 'generateSelector'],
  ...['revisionHistory', 'fieldPaths', 'ignoreStatusChanges', 'endpointConfigs', 'host'],
  ...['caBundle', 'inline', 'secretRef', 'configMapRef', 'clientTLS', 'authorization'],
  ...['basicAuth', 'etag', 'enabled', 'cacheTimeoutSeconds', 'cacheCleanupSeconds'],
  ...['clusters', 'cluster', 'users', 'user', 'contexts', 'context', 'current-context'],
  ...['server', 'certificate-authority', 'certificate-authority-data', 'token', 'tokenFile'],
  ...['insecure-skip-tls-verify', 'username', 'password', 'exec', 'command', 'args', 'env'],
  ...['value', 'auth-provider', 'client-certificate-data', 'client-key-data', 'interactiveMode'],
  ...['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'],
]

const fieldName: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FIELD_NAMES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }
)

/** Values that sit on the edges of what decoders accept. */
const edgeValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, '', 0, -1, 0.5, 1e21, -1e300, 2 ** 53, true, false, [], {}),
  fc.constantFrom<Json>('In', 'NotIn', 'Exists', 'v2', 'strict', 'InPlace', '10s', '-1h', '1e3'),
  fc.constantFrom<Json>('__proto__', 'a/b/c', 'UPPER', ' ', '\u0000', 'x'.repeat(300), [null]),
  anyJson
)

/** One mutation step: where (an index into the document's locations), what and with what. */
interface Mutation {
  readonly at: number
  readonly op: 'replace' | 'remove' | 'add' | 'wrap' | 'stringify'
  readonly key: string
  readonly value: Json
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'remove', 'add', 'wrap', 'stringify'),
  key: fieldName,
  value: edgeValue,
})

/** A place in a document: the root, or a key of an object, or an index of an array. */
type Location = { readonly parent: undefined } | { readonly parent: Json[]; readonly key: number }
type Place = Location | { readonly parent: Record<string, Json>; readonly key: string }

function locationsOf(doc: Json): Place[] {
  const places: Place[] = [{ parent: undefined }]
  const stack: Json[] = [doc]
  for (let value = stack.pop(); value !== undefined; value = stack.pop()) {
    if (Array.isArray(value)) {
      value.forEach((item, key) => {
        places.push({ parent: value, key })
        stack.push(item)
      })
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        places.push({ parent: value, key })
        stack.push(item)
      }
    }
  }
  return places
}

/** Sets an own property, so that even `__proto__` becomes a key as `JSON.parse` makes it. */
function setOwn(object: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

function valueAt(place: Place, doc: Json): Json {
  if (place.parent === undefined) return doc
  return Array.isArray(place.parent)
    ? (place.parent[place.key as number] ?? null)
    : (place.parent[place.key] ?? null)
}

function replaceAt(place: Place, doc: Json, value: Json): Json {
  if (place.parent === undefined) return value
  if (Array.isArray(place.parent)) place.parent[place.key as number] = value
  else setOwn(place.parent, place.key as string, value)
  return doc
}

/** Applies one mutation to a document (in place where it can) and returns the document. */
function applyMutation(doc: Json, { at, op, key, value: shared }: Mutation): Json {
  // Generated values may be shared constants (`[]`, `{}`): a later step must not grow them.
  const value = structuredClone(shared)
  const places = locationsOf(doc)
  const place = places[at % places.length] ?? { parent: undefined }
  const current = valueAt(place, doc)
  switch (op) {
    case 'replace':
      return replaceAt(place, doc, value)
    case 'remove':
      if (place.parent === undefined) return null
      if (Array.isArray(place.parent)) place.parent.splice(place.key as number, 1)
      else Reflect.deleteProperty(place.parent, place.key)
      return doc
    case 'add':
      if (Array.isArray(current)) current.push(value)
      else if (current !== null && typeof current === 'object') setOwn(current, key, value)
      else return replaceAt(place, doc, { [key]: value })
      return doc
    case 'wrap':
      return replaceAt(place, doc, [current])
    case 'stringify':
      return replaceAt(place, doc, JSON.stringify(current))
  }
}

/** Valid documents, each changed by one to `maxSteps` mutations. */
export function mutated(valid: fc.Arbitrary<Json>, maxSteps = 3): fc.Arbitrary<Json> {
  return fc
    .tuple(valid, fc.array(mutation, { minLength: 1, maxLength: maxSteps }))
    .map(([doc, steps]) => steps.reduce(applyMutation, structuredClone(doc)))
}

/** Text changed by a few character edits: inserted, deleted or replaced characters. */
export function mutatedText(valid: fc.Arbitrary<string>, maxEdits = 3): fc.Arbitrary<string> {
  const edit = fc.record({
    at: fc.nat(),
    remove: fc.nat({ max: 2 }),
    insert: fc.oneof(
      fc.constantFrom('', '"', '{', '}', '[', ']', ',', ':', '\\', ' ', '\n', '-', '!', '(', ')'),
      fc.constantFrom('=', '.', '/', '&a', '*a', '? ', '%', '!!', '0', 'µ', '\u0000', '\uD800'),
      fc.string({ maxLength: 3 })
    ),
  })
  return fc
    .tuple(valid, fc.array(edit, { minLength: 1, maxLength: maxEdits }))
    .map(([text, edits]) =>
      edits.reduce((t, { at, remove, insert }) => {
        const i = t.length === 0 ? 0 : at % (t.length + 1)
        return t.slice(0, i) + insert + t.slice(i + remove)
      }, text)
    )
}

/**
 * Inputs shaped to expose super-linear work: deep nesting, long runs and many repeats, a few
 * tens of kilobytes each.
 */
export const pathologicalText: fc.Arbitrary<string> = fc
  .record({
    depth: fc.integer({ min: 1, max: 1_000 }),
    repeats: fc.integer({ min: 1, max: 2_000 }),
    unit: fc.constantFrom('"x":1', '"x":{}', '[', '{"a":', 'a,', 'a in (', '1h', '- ', '&a [*a,'),
    open: fc.constantFrom('{"status":', '{"relatedResources":[', '{"children":[', 'a: ', ''),
  })
  .map(({ depth, repeats, unit, open }) => {
    const nest = '{"a":'.repeat(depth)
    return `${open}${nest}{${Array(repeats).fill(unit).join(',')}}${'}'.repeat(depth)}`
  })

/** Any text: JSON, JSON-like, pathological, or arbitrary strings. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.json({ maxDepth: 4 }),
  mutatedText(fc.json({ maxDepth: 3 })),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  { weight: 1, arbitrary: pathologicalText }
)

// Label selectors --------------------------------------------------------------------------

/** Label keys shared by generated selectors and label sets, so that they meet often. */
export const SELECTOR_KEYS = ['app', 'tier', 'example.com/role', 'a.b-c/x_y.z', 'k'] as const
/** Label values shared by generated selectors and label sets. */
export const SELECTOR_VALUES = ['a', 'b', 'c', '', 'a-1', 'A_b.c'] as const

const poolKey = fc.constantFrom(...SELECTOR_KEYS)
const poolValue = fc.constantFrom(...SELECTOR_VALUES)

/** A valid label key: `[prefix/]name`. */
export const labelKey: fc.Arbitrary<string> = fc.oneof(
  poolKey,
  fc
    .tuple(
      fc.option(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?(\.[a-z]{1,4}){0,2}$/)),
      fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/)
    )
    .map(([prefix, name]) => (prefix === null ? name : `${prefix}/${name}`))
)

/** A valid label value, empty included. */
export const labelValue: fc.Arbitrary<string> = fc.oneof(
  poolValue,
  fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/)
)

type Requirement = NonNullable<LabelSelectorSpec['matchExpressions']>[number]

function requirementOver(
  key: fc.Arbitrary<string>,
  value: fc.Arbitrary<string>
): fc.Arbitrary<Requirement> {
  return fc.oneof(
    fc.record({
      key,
      operator: fc.constantFrom('In' as const, 'NotIn' as const),
      values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ key, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) })
  )
}

/** A valid label selector over the given keys and values. */
export function labelSelectorOver(
  key: fc.Arbitrary<string> = poolKey,
  value: fc.Arbitrary<string> = poolValue
): fc.Arbitrary<LabelSelectorSpec> {
  return fc.record(
    {
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(requirementOver(key, value), { maxLength: 3 }),
    },
    { requiredKeys: [] }
  )
}

/** A label set over the shared keys and values (most selectors meet some of them). */
export const poolLabels: fc.Arbitrary<Record<string, string>> = fc.dictionary(poolKey, poolValue, {
  maxKeys: SELECTOR_KEYS.length,
})

/** A valid annotation selector: label-selector keys (any case) and free-text values. */
export const annotationSelector: fc.Arbitrary<JsonMap> = fc.record(
  {
    matchAnnotations: fc.dictionary(labelKey, fc.string({ maxLength: 8 }), { maxKeys: 2 }),
    matchExpressions: fc.array(requirementOver(labelKey, fc.string({ maxLength: 8 })), {
      maxLength: 2,
    }),
  },
  { requiredKeys: [] }
) as fc.Arbitrary<JsonMap>

/**
 * Valid selector text over the given keys and values, in the forms `labels.Parse` takes, with
 * the spacing a user may write.
 */
export function selectorTextOver(
  key: fc.Arbitrary<string> = poolKey,
  value: fc.Arbitrary<string> = poolValue
): fc.Arbitrary<string> {
  const space = fc.constantFrom('', ' ')
  return fc
    .array(
      fc.oneof(
        fc.tuple(key, space, fc.constantFrom('=', '==', '!='), space, value).map((p) => p.join('')),
        fc
          .tuple(
            key,
            fc.constantFrom(' in ', ' notin ', ' in', ' notin'),
            // `in ()` does not parse (here nor in labels.Parse): one empty value is `(,)`.
            fc.array(value, { minLength: 1, maxLength: 3 }).filter((vs) => vs.join(',') !== '')
          )
          .map(([k, op, vs]) => `${k}${op}(${vs.join(',')})`),
        key,
        key.map((k) => `!${k}`)
      ),
      { maxLength: 4 }
    )
    .map((parts) => parts.join(','))
}

/** Valid selector text over any valid keys and values. */
export const selectorText: fc.Arbitrary<string> = selectorTextOver(labelKey, labelValue)

// Hook responses ---------------------------------------------------------------------------

const smallObject: fc.Arbitrary<JsonObject> = fc.dictionary(fc.string({ maxLength: 6 }), anyJson, {
  maxKeys: 3,
})

/** A complete object as a hook returns it. */
export const kubeObject: fc.Arbitrary<KubeObject> = fc
  .record({
    apiVersion: fc.constantFrom('v1', 'apps/v1', 'example.com/v1alpha1'),
    kind: fc.constantFrom('ConfigMap', 'Service', 'Widget'),
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 8 }),
        namespace: fc.constantFrom('default', 'ns-a'),
        labels: fc.dictionary(labelKey, labelValue, { maxKeys: 2 }),
        annotations: fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 2 }),
      },
      { requiredKeys: ['name'] }
    ),
    data: smallObject,
  })
  .map((object) => object as KubeObject)

const hookEvent: fc.Arbitrary<HookEvent> = fc.record({
  type: fc.constantFrom('Normal' as const, 'Warning' as const),
  reason: fc.string({ minLength: 1, maxLength: 10 }),
  message: fc.string({ maxLength: 20 }),
})

/** `resyncAfterSeconds` as a hook writes it, in ms: none, whole or fractional seconds. */
const resyncAfterMs: fc.Arbitrary<number> = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 86_400 }).map((s) => s * 1000),
  fc.double({ min: 0.001, max: 1e6, noNaN: true }).map((s) => s * 1000)
)

const events = fc.option(fc.array(hookEvent, { minLength: 1, maxLength: 2 }), { nil: undefined })

/** A CompositeController sync response, as decoding one gives it. */
export const compositeResponse: fc.Arbitrary<CompositeSyncResponse> = fc
  .record({
    status: fc.option(smallObject),
    children: fc.array(kubeObject, { maxLength: 3 }),
    resyncAfterMs,
    finalized: fc.boolean(),
    events,
  })
  .map(({ events: list, ...response }) =>
    list === undefined ? response : { ...response, events: list }
  )

/** A DecoratorController sync response, as decoding one gives it. */
export const decoratorResponse: fc.Arbitrary<DecoratorSyncResponse> = fc
  .record({
    labels: fc.dictionary(labelKey, fc.option(labelValue), { maxKeys: 3 }),
    annotations: fc.dictionary(fc.string({ maxLength: 8 }), fc.option(fc.string()), {
      maxKeys: 3,
    }),
    status: fc.option(smallObject),
    attachments: fc.array(kubeObject, { maxLength: 3 }),
    resyncAfterMs,
    finalized: fc.boolean(),
    events,
  })
  .map(({ events: list, ...response }) =>
    list === undefined ? response : { ...response, events: list }
  )

const relatedRule: fc.Arbitrary<RelatedResourceRule> = fc.oneof(
  fc.record(
    {
      apiVersion: fc.constantFrom('v1', 'apps/v1'),
      resource: fc.constantFrom('configmaps', 'secrets'),
      namespace: fc.constantFrom('default', 'ns-a'),
      names: fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 2 }),
    },
    { requiredKeys: ['apiVersion', 'resource'] }
  ),
  fc.record(
    {
      apiVersion: fc.constantFrom('v1', 'example.com/v1'),
      resource: fc.constantFrom('configmaps', 'widgets'),
      labelSelector: labelSelectorOver(labelKey, labelValue),
      namespaceSelector: labelSelectorOver(),
    },
    { requiredKeys: ['apiVersion', 'resource'] }
  )
)

/** A customize response, as decoding one gives it. */
export const customizeResponse: fc.Arbitrary<CustomizeResponse> = fc.record({
  relatedResources: fc.array(relatedRule, { maxLength: 3 }),
})

/** Any JSON value with `__proto__` and friends as real keys, as `JSON.parse` produces them. */
export const jsonWithSpecialKeys: fc.Arbitrary<Json> = mutated(
  fc.constant<Json>({ a: { b: [1, { c: 'd' }] } }),
  4
)

/** Renders a generated object as YAML text. */
export function yamlText(doc: Json): string {
  return toYaml(doc)
}

// Controller specs -------------------------------------------------------------------------

/** A Go duration as a user writes it: one to three parts, maybe signed, maybe fractional. */
export const goDurationText: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.array(
      fc.tuple(
        fc.oneof(
          fc.nat({ max: 10_000 }).map(String),
          fc.tuple(fc.nat({ max: 999 }), fc.nat({ max: 999 })).map(([a, b]) => `${a}.${b}`),
          fc.nat({ max: 99 }).map((n) => `.${n}`)
        ),
        fc.constantFrom('ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h')
      ),
      { minLength: 1, maxLength: 3 }
    )
  )
  .map(([sign, parts]) => sign + parts.map(([n, unit]) => n + unit).join(''))

const apiVersion = fc.constantFrom('v1', 'apps/v1', 'example.com/v1alpha1')
const resource = fc.constantFrom('configmaps', 'services', 'widgets')

const webhook: fc.Arbitrary<JsonMap> = fc.record(
  {
    url: fc.constantFrom('http://hook.example:8080/sync', 'https://10.0.0.1/x'),
    timeout: goDurationText,
    responseUnMarshallMode: fc.constantFrom('loose', 'strict'),
    etag: fc.record({
      enabled: fc.boolean(),
      cacheTimeoutSeconds: fc.nat({ max: 3_000_000 }),
      cacheCleanupSeconds: fc.nat({ max: 3_000_000 }),
    }),
  },
  { requiredKeys: ['url'] }
)

const hook: fc.Arbitrary<JsonMap> = fc.record(
  { version: fc.constantFrom('v1', 'v2', ''), webhook },
  { requiredKeys: ['webhook'] }
)

const hooks: fc.Arbitrary<JsonMap> = fc.record(
  { sync: hook, finalize: hook, customize: hook },
  { requiredKeys: ['sync'] }
)

const childRule: fc.Arbitrary<JsonMap> = fc.record(
  {
    apiVersion,
    resource,
    updateStrategy: fc.record(
      {
        method: fc.constantFrom('OnDelete', 'Recreate', 'InPlace', 'RollingRecreate', ''),
        statusChecks: fc.record({
          conditions: fc.array(
            fc.record({ type: fc.constantFrom('Ready'), status: fc.constantFrom('True') }),
            { maxLength: 1 }
          ),
        }),
      },
      { requiredKeys: [] }
    ),
  },
  { requiredKeys: ['apiVersion', 'resource'] }
)

/** Resync periods up to beyond what a Node timer can wait for (2^31 - 1 ms, about 24.8 days). */
const resyncPeriodSeconds = fc.oneof(fc.nat({ max: 600 }), fc.nat({ max: 10_000_000 }))

/** A valid CompositeController `spec`. */
export const compositeSpec: fc.Arbitrary<JsonMap> = fc.record(
  {
    parentResource: fc.record(
      {
        apiVersion,
        resource,
        labelSelector: labelSelectorOver(labelKey, labelValue),
        revisionHistory: fc.record({ fieldPaths: fc.array(fc.constantFrom('spec', 'spec.a')) }),
        ignoreStatusChanges: fc.boolean(),
      },
      { requiredKeys: ['apiVersion', 'resource'] }
    ),
    childResources: fc.array(childRule, { maxLength: 2 }),
    hooks,
    resyncPeriodSeconds,
    generateSelector: fc.boolean(),
  },
  { requiredKeys: ['parentResource', 'hooks'] }
) as unknown as fc.Arbitrary<JsonMap>

/** A valid DecoratorController `spec`. */
export const decoratorSpec: fc.Arbitrary<JsonMap> = fc.record(
  {
    resources: fc.array(
      fc.record(
        {
          apiVersion,
          resource,
          labelSelector: labelSelectorOver(labelKey, labelValue),
          annotationSelector,
        },
        { requiredKeys: ['apiVersion', 'resource'] }
      ),
      { minLength: 1, maxLength: 2 }
    ),
    attachments: fc.array(childRule, { maxLength: 2 }),
    hooks,
    resyncPeriodSeconds,
  },
  { requiredKeys: ['resources', 'hooks'] }
) as unknown as fc.Arbitrary<JsonMap>

// Kubeconfigs ------------------------------------------------------------------------------

/** What the fake file system of the kubeconfig properties holds at every path. */
export const PEM_TEXT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const pemData = Buffer.from(PEM_TEXT).toString('base64')

const kubeconfigUser: fc.Arbitrary<JsonMap> = fc.oneof(
  fc.record({ token: fc.string({ minLength: 1, maxLength: 10 }) }),
  fc.record({ username: fc.constantFrom('admin'), password: fc.string({ maxLength: 8 }) }),
  fc.record({ tokenFile: fc.constantFrom('token', '/abs/token') }),
  fc.record({
    'client-certificate-data': fc.constant(pemData),
    'client-key-data': fc.constant(pemData),
  }),
  fc.record({ 'client-certificate': fc.constant('c.crt'), 'client-key': fc.constant('c.key') }),
  fc.record({
    exec: fc.record({
      apiVersion: fc.constantFrom(
        'client.authentication.k8s.io/v1',
        'client.authentication.k8s.io/v1beta1'
      ),
      command: fc.constantFrom('kubelogin', './bin/cred'),
      args: fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }),
      env: fc.array(fc.record({ name: fc.constantFrom('A'), value: fc.string({ maxLength: 4 }) }), {
        maxLength: 1,
      }),
      interactiveMode: fc.constantFrom('Never', 'IfAvailable'),
    }),
  })
)

/** A valid kubeconfig document (before YAML rendering), one context selected. */
export const kubeconfigDoc: fc.Arbitrary<JsonMap> = fc
  .record({
    server: fc.constantFrom('https://127.0.0.1:6443', '127.0.0.1:6443', 'http://[::1]:8080/'),
    ca: fc.constantFrom<Record<string, Json>>(
      { 'certificate-authority-data': pemData },
      { 'certificate-authority': 'ca.crt' },
      { 'insecure-skip-tls-verify': true },
      {}
    ),
    user: fc.option(kubeconfigUser, { nil: undefined }),
    namespace: fc.option(fc.constantFrom('default', 'team-a'), { nil: undefined }),
  })
  .map(({ server, ca, user, namespace }) => ({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, ...ca } }],
    users: user === undefined ? [] : [{ name: 'u', user }],
    contexts: [
      {
        name: 'x',
        context: {
          cluster: 'c',
          ...(user === undefined ? {} : { user: 'u' }),
          ...(namespace === undefined ? {} : { namespace }),
        },
      },
    ],
    'current-context': 'x',
  }))
