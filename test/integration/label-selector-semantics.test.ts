// Proves that our label selectors select what the API server selects: ConfigMaps with generated
// labels in one namespace, then a few hundred generated selectors, each listed by the server
// (`labelSelector` query) and matched by our compiled matcher, which must agree object for object.
// Selectors are sent both as `formatSelector` writes them (set-based included) and as a user
// types them (`a!=b`, `k in(,c)`, `!k`, spacing), which `parseSelectorString` must read as the
// server does.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import type { KubeObject } from '../../src/core/kube-object.js'
import { compileLabelSelector, formatSelector } from '../../src/core/label-selector.js'
import { parseSelectorString } from '../../src/core/parse-selector-string.js'
import { LabelSelectorError } from '../../src/core/label-selector-error.js'
import type { LabelSelector } from '../../src/core/label-selector.js'
import { ApiError } from '../../src/kube/api-error.js'
import { CONFIGMAPS, NAMESPACES } from '../../src/kube/well-known-resources.js'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  labelSelectorOver,
  mutatedText,
  poolLabels,
  SELECTOR_KEYS,
  SELECTOR_VALUES,
  selectorTextOver,
} from '../support/decoder-arbitraries.js'

const SEED = 19
const OBJECTS = 48
const SELECTORS = 200
const TEXTS = 100
const MUTATED = 100

/** Label sets: generated ones, plus none at all and every key with each value. */
function labelSets(): Record<string, string>[] {
  const every = SELECTOR_VALUES.map((value) =>
    Object.fromEntries(SELECTOR_KEYS.map((key) => [key, value]))
  )
  return [{}, ...every, ...fc.sample(poolLabels, { seed: SEED, numRuns: OBJECTS })]
}

describe('label selectors against the API server', () => {
  let plane: ControlPlane
  let namespace: string
  const objects: { name: string; labels: Record<string, string> }[] = []

  /** The names the server lists for a selector text, and the names our matcher picks. */
  async function compare(text: string, selector: LabelSelector): Promise<string | undefined> {
    const listed = await plane.client.list(CONFIGMAPS, { namespace, labelSelector: text })
    // kube-root-ca.crt, which the server puts in every namespace, is not one of ours.
    const server = listed.items
      .map((o: KubeObject) => o.metadata.name ?? '')
      .filter((name) => name.startsWith('cm-'))
      .sort()
    const matches = compileLabelSelector(selector)
    const ours = objects.filter((o) => matches(o.labels)).map((o) => o.name)
    const same = JSON.stringify(server) === JSON.stringify(ours)
    return same
      ? undefined
      : `${JSON.stringify(text)}: server ${server.join(' ')}; ours ${ours.join(' ')}`
  }

  before(async () => {
    plane = await startControlPlane()
    namespace = `selectors-${randomBytes(3).toString('hex')}`
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
    for (const [i, labels] of labelSets().entries()) {
      const name = `cm-${String(i).padStart(3, '0')}`
      await plane.client.create(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace, labels },
      })
      objects.push({ name, labels })
    }
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('selects the same objects as the server for generated selectors, set-based included', async () => {
    const selectors = fc.sample(labelSelectorOver(), { seed: SEED, numRuns: SELECTORS })
    const differences: string[] = []
    for (const selector of selectors) {
      const difference = await compare(formatSelector(selector), selector)
      if (difference !== undefined) differences.push(difference)
    }
    assert.deepEqual(differences, [])
    // The generated selectors must exercise both outcomes, or agreement proves little.
    const counts = selectors.map(
      (s) => objects.filter((o) => compileLabelSelector(s)(o.labels)).length
    )
    assert.ok(counts.some((n) => n === 0) && counts.some((n) => n > 0 && n < objects.length))
  })

  it('reads selector text as the server does', async () => {
    const texts = fc.sample(selectorTextOver(), { seed: SEED, numRuns: TEXTS })
    const differences: string[] = []
    for (const text of texts) {
      const difference = await compare(text, parseSelectorString(text))
      if (difference !== undefined) differences.push(difference)
    }
    assert.deepEqual(differences, [])
  })

  it('refuses the selector text the server refuses, and reads the rest as it does', async () => {
    // `>` and `<` (Gt, Lt) are refused on purpose: a LabelSelector cannot express them.
    const texts = fc
      .sample(mutatedText(selectorTextOver(), 2), { seed: SEED, numRuns: MUTATED })
      .filter((text) => !/[<>]/.test(text))
    const differences: string[] = []
    let refused = 0
    for (const text of texts) {
      let selector: LabelSelector | undefined
      try {
        selector = parseSelectorString(text)
      } catch (error) {
        if (!(error instanceof LabelSelectorError)) throw error
      }
      if (selector !== undefined) {
        const difference = await compare(text, selector).catch((error: unknown) => {
          if (error instanceof ApiError && error.statusCode === 400)
            return `${text}: server refused`
          throw error
        })
        if (difference !== undefined) differences.push(difference)
        continue
      }
      refused++
      const status = await plane.client
        .list(CONFIGMAPS, { namespace, labelSelector: text })
        .then(() => 200)
        .catch((error: unknown) => (error instanceof ApiError ? error.statusCode : 0))
      if (status !== 400) differences.push(`${JSON.stringify(text)}: we refused, server ${status}`)
    }
    assert.deepEqual(differences, [])
    assert.ok(refused > 0 && refused < texts.length, `${refused} of ${texts.length} refused`)
  })
})
