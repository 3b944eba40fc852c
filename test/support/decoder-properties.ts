/**
 * The decoder properties, defined once: the unit tests check each with a fixed seed and few
 * runs, `bench/property-fuzz.ts` checks them all with a random seed and many runs.
 *
 * @remarks
 * Each decoder is meant to refuse bad input with its own typed error only (a raw `TypeError`
 * is a bug), to return, and to keep what it accepts: a decoded hook response re-encodes to a
 * body that decodes the same, a parsed selector matches what the raw one matches.
 *
 * @module
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { parseCompositeControllerSpec } from '../../src/api/composite-controller-spec.js'
import { ControllerSpecError } from '../../src/api/controller-spec-error.js'
import type { ControllerHooks } from '../../src/api/controller-spec-fields.js'
import { parseDecoratorControllerSpec } from '../../src/api/decorator-controller-spec.js'
import { HookResponseError } from '../../src/api/hook-response-error.js'
import type { HookCodec } from '../../src/api/wire/hook-codec.js'
import { v1Codec } from '../../src/api/wire/v1.js'
import { v2Codec } from '../../src/api/wire/v2.js'
import { compileAnnotationSelector } from '../../src/core/annotation-selector.js'
import { parseGoDuration } from '../../src/core/go-duration.js'
import type { LabelSelector } from '../../src/core/label-selector.js'
import {
  compileLabelSelector,
  equalityTerms,
  formatSelector,
} from '../../src/core/label-selector.js'
import { parseSelectorString } from '../../src/core/parse-selector-string.js'
import { LabelSelectorError } from '../../src/core/label-selector-error.js'
import { KubeconfigError } from '../../src/kube/kubeconfig-error.js'
import { parseKubeconfig } from '../../src/kube/parse-kubeconfig.js'
import { resolveKubeconfig } from '../../src/kube/resolve-kubeconfig.js'
import type { Json } from './decoder-arbitraries.js'
import {
  anyJson,
  anyText,
  compositeResponse,
  compositeSpec,
  customizeResponse,
  decoratorResponse,
  decoratorSpec,
  goDurationText,
  jsonWithSpecialKeys,
  kubeconfigDoc,
  labelSelectorOver,
  mutated,
  mutatedText,
  PEM_TEXT,
  poolLabels,
  selectorText,
  yamlText,
} from './decoder-arbitraries.js'
import {
  encodeCompositeResponse,
  encodeCustomizeResponse,
  encodeDecoratorResponse,
} from './hook-response-wire.js'

/** How a property is run: the seed and the number of generated cases. */
export interface RunParameters {
  readonly seed: number
  readonly numRuns: number
}

/** One named property of one decoder. */
export interface DecoderProperty {
  /** What the property states; the unit test has this name. */
  readonly name: string
  /** Checks the property; throws (or rejects) with fast-check's report on a counterexample. */
  readonly check: (run: RunParameters) => void | Promise<void>
}

/** The unit tier's parameters: a fixed seed and few runs. */
export const UNIT_RUN: RunParameters = { seed: 19, numRuns: 100 }

/** Runs `decode`; an error of any class but `expected` fails the property. */
function throwsOnly(expected: abstract new (...args: never[]) => Error, decode: () => unknown) {
  try {
    decode()
  } catch (error) {
    if (!(error instanceof expected)) throw error
  }
}

function property<T>(
  name: string,
  input: fc.Arbitrary<T>,
  predicate: (value: T) => void
): DecoderProperty {
  return {
    name,
    check: (run) => {
      fc.assert(fc.property(input, predicate), run)
    },
  }
}

/** Compares two JSON values as their wire text compares. */
function assertSameJson(actual: unknown, expected: unknown): void {
  assert.deepEqual(JSON.parse(JSON.stringify(actual)), JSON.parse(JSON.stringify(expected)))
}

// Hook responses ---------------------------------------------------------------------------

type ResponseKind = 'composite' | 'decorator' | 'customize'

interface DecodeCase {
  readonly codec: HookCodec
  readonly kind: ResponseKind
  readonly mode: 'loose' | 'strict'
}

const decodeCase: fc.Arbitrary<DecodeCase> = fc.record({
  codec: fc.constantFrom(v1Codec, v2Codec),
  kind: fc.constantFrom('composite', 'decorator', 'customize'),
  mode: fc.constantFrom('loose', 'strict'),
})

function decode({ codec, kind, mode }: DecodeCase, body: string): object {
  switch (kind) {
    case 'composite':
      return codec.decodeCompositeSync(body, { mode }).response
    case 'decorator':
      return codec.decodeDecoratorSync(body, { mode }).response
    case 'customize':
      return codec.decodeCustomize(body, { mode }).response
  }
}

/** The warnings of a loose decode. */
function looseWarnings({ codec, kind }: DecodeCase, body: string): readonly string[] {
  const options = { mode: 'loose' } as const
  switch (kind) {
    case 'composite':
      return codec.decodeCompositeSync(body, options).warnings
    case 'decorator':
      return codec.decodeDecoratorSync(body, options).warnings
    case 'customize':
      return codec.decodeCustomize(body, options).warnings
  }
}

/** A valid response of one kind, as the wire JSON a hook sends. */
function validBody(kind: ResponseKind): fc.Arbitrary<Json> {
  const encoded: fc.Arbitrary<object> =
    kind === 'composite'
      ? compositeResponse.map(encodeCompositeResponse)
      : kind === 'decorator'
        ? decoratorResponse.map(encodeDecoratorResponse)
        : customizeResponse.map(encodeCustomizeResponse)
  return encoded.map((body) => JSON.parse(JSON.stringify(body)) as Json)
}

/** A decode case with a valid body of its kind, mutated a few steps. */
const mutatedResponse = decodeCase.chain((c) =>
  mutated(validBody(c.kind)).map((body) => [c, JSON.stringify(body)] as const)
)

function encode(kind: ResponseKind, response: object): string {
  switch (kind) {
    case 'composite':
      return JSON.stringify(encodeCompositeResponse(response as never))
    case 'decorator':
      return JSON.stringify(encodeDecoratorResponse(response as never))
    case 'customize':
      return JSON.stringify(encodeCustomizeResponse(response as never))
  }
}

/** Properties of the hook response decoders (`src/api/wire/`). */
export const hookResponseProperties: readonly DecoderProperty[] = [
  property(
    'decoding any body throws nothing but a HookResponseError',
    fc.tuple(decodeCase, anyText),
    ([c, body]) => {
      throwsOnly(HookResponseError, () => decode(c, body))
    }
  ),
  property(
    'decoding a mutated valid body throws nothing but a HookResponseError',
    mutatedResponse,
    ([c, body]) => {
      throwsOnly(HookResponseError, () => decode(c, body))
    }
  ),
  property(
    'a valid body decodes to exactly what it says, and re-encodes to itself',
    decodeCase.chain((c) => validBody(c.kind).map((body) => [c, body] as const)),
    ([c, body]) => {
      const decoded = decode(c, JSON.stringify(body))
      assertSameJson(JSON.parse(encode(c.kind, decoded)), body)
    }
  ),
  property(
    'a body strict mode accepts decodes the same in loose mode, with no strict issue',
    mutatedResponse,
    ([c, body]) => {
      let strict: object
      try {
        strict = decode({ ...c, mode: 'strict' }, body)
      } catch (error) {
        if (error instanceof HookResponseError) return
        throw error
      }
      assertSameJson(decode({ ...c, mode: 'loose' }, body), strict)
      // Skipped null entries are warnings in both modes; nothing else may be.
      const others = looseWarnings(c, body).filter((w) => !w.startsWith('skipped the null entry'))
      assert.deepEqual(others, [])
    }
  ),
  property(
    'a decoded response encodes to a body that decodes to the same response',
    mutatedResponse,
    ([c, body]) => {
      let first: object
      try {
        first = decode({ ...c, mode: 'loose' }, body)
      } catch (error) {
        if (error instanceof HookResponseError) return
        throw error
      }
      assertSameJson(decode(c, encode(c.kind, first)), first)
    }
  ),
]

// Controller specs -------------------------------------------------------------------------

const anySpec = fc.oneof(
  anyJson,
  jsonWithSpecialKeys,
  mutated(compositeSpec),
  mutated(decoratorSpec)
)

/** Node's timers wait at most this long; a longer delay fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1

function timerDelays(hooks: ControllerHooks, resyncPeriodMs: number | undefined): number[] {
  const webhooks = [hooks.sync, hooks.finalize, hooks.customize].flatMap((h) =>
    h?.webhook === undefined ? [] : [h.webhook]
  )
  return [
    ...(resyncPeriodMs === undefined ? [] : [resyncPeriodMs]),
    ...webhooks.map((w) => w.timeoutMs),
    ...webhooks.flatMap((w) =>
      w.etag?.cacheCleanupMs === undefined ? [] : [w.etag.cacheCleanupMs]
    ),
  ]
}

/** Parses a spec, or returns undefined when the parser refuses it with a ControllerSpecError. */
function parsedOrRefused<T>(parse: () => T): T | undefined {
  try {
    return parse()
  } catch (error) {
    if (error instanceof ControllerSpecError) return undefined
    throw error
  }
}

/** Asserts that a parsed label selector matches what the raw one from the spec matches. */
function assertKeptSelector(raw: unknown, parsed: LabelSelector | undefined): void {
  const selector = raw === null ? undefined : (raw as LabelSelector | undefined)
  // The raw selector must compile: the parser accepted the spec it is part of.
  assert.equal(formatSelector(parsed), formatSelector(selector))
}

function selectorsOf(spec: Json): unknown[] {
  const root = spec as Record<string, Record<string, unknown> | undefined>
  const resources = (root['resources'] ?? []) as unknown as Record<string, unknown>[]
  return resources.map((r) => r['labelSelector'])
}

/** Properties of the CompositeController and DecoratorController spec parsers. */
export const controllerSpecProperties: readonly DecoderProperty[] = [
  property(
    'parsing any spec throws nothing but a ControllerSpecError',
    fc.tuple(anySpec, fc.boolean()),
    ([spec, composite]) => {
      throwsOnly(ControllerSpecError, () =>
        composite ? parseCompositeControllerSpec(spec) : parseDecoratorControllerSpec(spec)
      )
    }
  ),
  property(
    'a parsed composite spec keeps the parent selector it was given, or is refused',
    mutated(compositeSpec),
    (spec) => {
      const parsed = parsedOrRefused(() => parseCompositeControllerSpec(spec))
      if (parsed === undefined) return
      const parent = (spec as Record<string, Record<string, unknown>>)['parentResource']
      assertKeptSelector(parent?.['labelSelector'], parsed.parentResource.labelSelector)
    }
  ),
  property(
    'a parsed decorator spec keeps the selectors it was given, or is refused',
    mutated(decoratorSpec),
    (spec) => {
      const parsed = parsedOrRefused(() => parseDecoratorControllerSpec(spec))
      if (parsed === undefined) return
      selectorsOf(spec).forEach((raw, i) => {
        assertKeptSelector(raw, parsed.resources[i]?.labelSelector)
      })
    }
  ),
  property(
    'every delay a parsed spec holds is one a Node timer can wait for',
    fc.tuple(fc.oneof(compositeSpec, mutated(compositeSpec)), decoratorSpec),
    ([composite, decorator]) => {
      const a = parsedOrRefused(() => parseCompositeControllerSpec(composite))
      const b = parsedOrRefused(() => parseDecoratorControllerSpec(decorator))
      for (const spec of [a, b]) {
        if (spec === undefined) continue
        for (const ms of timerDelays(spec.hooks, spec.resyncPeriodMs)) {
          assert.ok(ms > 0 && ms <= MAX_TIMER_MS, `a delay of ${ms} ms`)
        }
      }
    }
  ),
]

// Label and annotation selectors -----------------------------------------------------------

const rawSelector = fc.oneof(
  anyJson,
  mutated(labelSelectorOver() as fc.Arbitrary<Json>),
  fc.record({ matchLabels: jsonWithSpecialKeys, matchExpressions: jsonWithSpecialKeys })
)

function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  return compileLabelSelector(selector)(labels)
}

const NEGATION = {
  In: 'NotIn',
  NotIn: 'In',
  Exists: 'DoesNotExist',
  DoesNotExist: 'Exists',
} as const

/** Properties of the label and annotation selectors (`src/core/`). */
export const labelSelectorProperties: readonly DecoderProperty[] = [
  property(
    'compiling any selector throws nothing but a LabelSelectorError',
    fc.tuple(rawSelector, fc.boolean()),
    ([raw, labels]) => {
      const selector = raw as never
      throwsOnly(LabelSelectorError, () =>
        labels ? compileLabelSelector(selector) : compileAnnotationSelector(selector)
      )
      throwsOnly(LabelSelectorError, () => formatSelector(selector))
    }
  ),
  property(
    'parsing any selector text throws nothing but a LabelSelectorError',
    fc.oneof(anyText, mutatedText(selectorText)),
    (text) => {
      throwsOnly(LabelSelectorError, () => parseSelectorString(text))
    }
  ),
  property(
    'a formatted selector parses back to one that matches the same label sets',
    fc.tuple(
      fc.oneof(labelSelectorOver(), selectorText.map(parseSelectorString)),
      fc.array(poolLabels, { minLength: 1, maxLength: 8 })
    ),
    ([selector, labelSets]) => {
      const reparsed = parseSelectorString(formatSelector(selector))
      for (const labels of labelSets) {
        assert.equal(matches(reparsed, labels), matches(selector, labels), JSON.stringify(labels))
      }
    }
  ),
  property(
    'every label set a selector matches has one of the values of each of its equality terms',
    fc.tuple(labelSelectorOver(), fc.array(poolLabels, { minLength: 1, maxLength: 8 })),
    ([selector, labelSets]) => {
      // The caches find a selector's candidates through these terms: a miss loses an object.
      const terms = equalityTerms(selector)
      for (const labels of labelSets.filter((l) => matches(selector, l))) {
        for (const { key, values } of terms) assert.ok(values.includes(labels[key] ?? '\0'))
      }
    }
  ),
  property(
    'NotIn and DoesNotExist match exactly the label sets In and Exists do not',
    fc.tuple(
      labelSelectorOver().filter((s) => (s.matchExpressions ?? []).length > 0),
      poolLabels
    ),
    ([selector, labels]) => {
      for (const requirement of selector.matchExpressions ?? []) {
        const negated = { ...requirement, operator: NEGATION[requirement.operator] }
        const one = matches({ matchExpressions: [requirement] }, labels)
        assert.notEqual(matches({ matchExpressions: [negated] }, labels), one)
      }
    }
  ),
  property(
    'an annotation selector matches label-valid annotations as the label selector does',
    fc.tuple(labelSelectorOver(), poolLabels),
    ([selector, labels]) => {
      const { matchLabels, matchExpressions } = selector
      const annotations = compileAnnotationSelector({
        ...(matchLabels === undefined ? {} : { matchAnnotations: matchLabels }),
        ...(matchExpressions === undefined ? {} : { matchExpressions }),
      })
      assert.equal(annotations(labels), matches(selector, labels))
    }
  ),
]

// Go durations -----------------------------------------------------------------------------

/** Formats nanoseconds as Go's `time.Duration.String` does: `1h2m0.5s`, `1.5ms`, `0s`. */
export function goDurationString(ns: bigint): string {
  if (ns === 0n) return '0s'
  const sign = ns < 0n ? '-' : ''
  let rest = ns < 0n ? -ns : ns
  const fraction = (value: bigint, scale: bigint): string => {
    const digits = String(scale).length - 1
    const tail = String(value % scale)
      .padStart(digits, '0')
      .replace(/0+$/, '')
    return `${value / scale}${tail === '' ? '' : `.${tail}`}`
  }
  if (rest < 1_000n) return `${sign}${rest}ns`
  if (rest < 1_000_000n) return `${sign}${fraction(rest, 1_000n)}µs`
  if (rest < 1_000_000_000n) return `${sign}${fraction(rest, 1_000_000n)}ms`
  const hours = rest / 3_600_000_000_000n
  rest %= 3_600_000_000_000n
  const minutes = rest / 60_000_000_000n
  rest %= 60_000_000_000n
  const h = hours > 0n ? `${hours}h` : ''
  const m = hours > 0n || minutes > 0n ? `${minutes}m` : ''
  return `${sign}${h}${m}${fraction(rest, 1_000_000_000n)}s`
}

/** The largest magnitude Go's `time.Duration` holds, in ms. */
const GO_MAX_MS = 9_223_372_036_854.775

/** Properties of the Go duration parser (`src/core/go-duration.ts`). */
export const goDurationProperties: readonly DecoderProperty[] = [
  property(
    'parsing any text returns a finite number or undefined',
    fc.oneof(anyText, mutatedText(goDurationText), goDurationText),
    (text) => {
      const ms = parseGoDuration(text)
      assert.ok(ms === undefined || Number.isFinite(ms), String(ms))
    }
  ),
  property(
    'a duration as Go prints it parses back to the same time',
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    (ns) => {
      const ms = parseGoDuration(goDurationString(ns))
      const expected = Number(ns) / 1e6
      assert.ok(ms !== undefined, goDurationString(ns))
      assert.ok(Math.abs(ms - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${ms}`)
    }
  ),
  property(
    'a duration longer than Go can represent is refused',
    fc.tuple(fc.constantFrom('', '-'), fc.bigInt({ min: 2_562_048n, max: 10n ** 30n })),
    ([sign, hours]) => {
      assert.ok(GO_MAX_MS < 2_562_048 * 3_600_000)
      assert.equal(parseGoDuration(`${sign}${hours}h`), undefined)
    }
  ),
]

// Kubeconfigs ------------------------------------------------------------------------------

const kubeconfigText = fc.oneof(
  anyText,
  kubeconfigDoc.map(yamlText),
  mutatedText(kubeconfigDoc.map(yamlText)),
  mutated(kubeconfigDoc).map(yamlText),
  fc.constantFrom('%FOO bar\n---\na: 1', '!tag x', 'a: !!binary x', '&a [*a]', 'a: *b', '- - -')
)

/** A fake file system: token files hold a token, the others a PEM block; `missing` is absent. */
async function readFake(path: string): Promise<string> {
  await Promise.resolve()
  if (path.includes('missing')) {
    throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
  }
  return path.endsWith('token') ? 'token-value\n' : PEM_TEXT
}

/** Runs `work` and returns what it passed to `process.emitWarning`. */
function warningsOf(work: () => void): unknown[] {
  const emitted: unknown[] = []
  const original = process.emitWarning.bind(process)
  process.emitWarning = (warning: string | Error) => {
    emitted.push(warning)
  }
  try {
    work()
  } finally {
    process.emitWarning = original
  }
  return emitted
}

/** Properties of the kubeconfig loader (`src/kube/load-cluster-config.ts`). */
export const kubeconfigProperties: readonly DecoderProperty[] = [
  property(
    'parsing any text throws nothing but a KubeconfigError, and prints no warning',
    kubeconfigText,
    (text) => {
      const warnings = warningsOf(() => {
        throwsOnly(KubeconfigError, () => parseKubeconfig(text, '/home/u/.kube/config'))
      })
      assert.deepEqual(warnings, [])
    }
  ),
  {
    name: 'loading a mutated valid kubeconfig fails with nothing but a KubeconfigError',
    check: (run) =>
      fc.assert(
        fc.asyncProperty(mutated(kubeconfigDoc), async (doc) => {
          try {
            const config = parseKubeconfig(yamlText(doc), '/home/u/.kube/config')
            await resolveKubeconfig(config, { readFile: readFake })
          } catch (error) {
            if (!(error instanceof KubeconfigError)) throw error
          }
        }),
        run
      ),
  },
  {
    name: 'a kubeconfig that loads gives a token an HTTP request can carry',
    check: (run) =>
      fc.assert(
        fc.asyncProperty(
          kubeconfigDoc,
          fc.string({ unit: 'binary', maxLength: 6 }),
          async (doc, token) => {
            const users = [{ name: 'u', user: { token: `t${token}` } }]
            const contexts = [{ name: 'x', context: { cluster: 'c', user: 'u' } }]
            const text = yamlText({ ...doc, users, contexts })
            let auth
            try {
              auth = (
                await resolveKubeconfig(parseKubeconfig(text, '/k/config'), { readFile: readFake })
              ).auth
            } catch (error) {
              if (error instanceof KubeconfigError) return
              throw error
            }
            // The platform's own header check, independent of ours.
            if (auth.type === 'token') new Headers({ authorization: `Bearer ${auth.token}` })
          }
        ),
        run
      ),
  },
  {
    name: 'a valid kubeconfig loads, with its server and namespace',
    check: (run) =>
      fc.assert(
        fc.asyncProperty(kubeconfigDoc, async (doc) => {
          const config = parseKubeconfig(yamlText(doc), '/home/u/.kube/config')
          const cluster = await resolveKubeconfig(config, { readFile: readFake })
          assert.match(cluster.server, /^https?:\/\/[^/]+$/)
          const contexts = doc['contexts'] as { context: { namespace?: string } }[]
          assert.equal(cluster.namespace, contexts[0]?.context.namespace ?? 'default')
        }),
        run
      ),
  },
]

/** Every decoder's properties, by decoder, for the fuzz run. */
export const DECODER_PROPERTIES: Readonly<Record<string, readonly DecoderProperty[]>> = {
  'hook responses': hookResponseProperties,
  'controller specs': controllerSpecProperties,
  'label and annotation selectors': labelSelectorProperties,
  'Go durations': goDurationProperties,
  kubeconfigs: kubeconfigProperties,
}
