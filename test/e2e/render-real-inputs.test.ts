// `metactl render` on what a user has at hand: `kubectl get -o yaml` output (a List, children owned
// by the live parent's uid), a sample parent without a uid, a TypeScript hook run by the built CLI
// without tsx flags, a CRD to check the sample against, and --diff output a change can be read in.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseAllDocuments, stringify } from 'yaml'
import { crdFixture } from '../support/crd-fixture.js'
import { metactl } from '../support/run-metactl.js'

const FIXTURES = 'test/fixtures/render'
const BASE = [
  'render',
  '--controller',
  `${FIXTURES}/controller.yaml`,
  '--parent',
  `${FIXTURES}/parent.yaml`,
  '--hook-module',
  `${FIXTURES}/hook.ts`,
]

/** The observed fixtures' objects. */
function observedObjects(): Record<string, unknown>[] {
  return ['observed.yaml', 'observed-configmaps.yaml'].flatMap((name) =>
    parseAllDocuments(readFileSync(join(FIXTURES, name), 'utf8')).map(
      (doc) => doc.toJS() as Record<string, unknown>
    )
  )
}

describe('metactl render with real inputs', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-render-real-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('reads the observed children from one kubectl List as from separate documents', async () => {
    const list = join(work, 'list.yaml')
    const items = observedObjects()
    writeFileSync(list, stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items }))
    const result = await metactl([...BASE, '--observed', list])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, '')
    assert.equal(result.stdout, readFileSync(join(FIXTURES, 'observed.golden.txt'), 'utf8'))
  })

  it('gives a parent without uid the uid its observed children name, so it claims them', async () => {
    const live = join(work, 'live.yaml')
    const text = observedObjects()
      .map((o) => stringify(o))
      .join('---\n')
      .replaceAll('00000000-0000-0000-0000-render0000000', 'b2c5e0e4-live-uid')
    writeFileSync(live, text)
    const result = await metactl([...BASE, '--observed', live])
    assert.equal(result.code, 0, result.stderr)
    assert.doesNotMatch(result.stderr, /left out/)
    assert.match(result.stdout, /^# {3}pods: 2$/m, 'both Pods were claimed and sent to the hook')
    assert.match(result.stdout, /^# {3}delete {5}ConfigMap\.v1 demo\/shop-legacy$/m)
    assert.match(result.stdout, /^ {4}controller-uid: b2c5e0e4-live-uid$/m)
  })

  it('loads a TypeScript hook module in the built CLI without tsx flags', async () => {
    const result = await metactl(BASE, { built: true })
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, readFileSync(join(FIXTURES, 'create.golden.txt'), 'utf8'))
  })

  it('--diff shows the changed lines with context, not whole objects', async () => {
    const result = await metactl([...BASE, '--observed', `${FIXTURES}/observed.yaml`, '--diff'])
    assert.equal(result.code, 0, result.stderr)
    const lines = result.stdout.split('\n')
    const start = lines.indexOf('+++ written Service.v1 demo/shop (update)')
    const end = lines.findIndex((l, i) => i > start && l.startsWith('--- '))
    const body = lines.slice(start + 1, end === -1 ? undefined : end)
    assert.match(body[0] ?? '', /^@@ -\d+,\d+ \+\d+,\d+ @@$/)
    assert.ok(!body.includes('  kind: Service'), 'lines far from the change are left out')
    assert.ok(body.includes('+     - port: 80'), body.join('\n'))
  })

  it('--crd rejects a parent that breaks its schema, in the API server words', async () => {
    const crd = join(work, 'crd.yaml')
    writeFileSync(
      crd,
      stringify(
        crdFixture({
          kind: 'Website',
          plural: 'websites',
          scope: 'Namespaced',
          schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['image'],
                properties: { image: { type: 'string' }, port: { type: 'integer' } },
              },
            },
          },
        })
      )
    )
    const ok = await metactl([...BASE, '--crd', crd])
    assert.equal(ok.code, 0, ok.stderr)
    const parent = join(work, 'bad-parent.yaml')
    writeFileSync(
      parent,
      readFileSync(join(FIXTURES, 'parent.yaml'), 'utf8').replace('port: 80', 'port: "80"')
    )
    const bad = await metactl([...BASE.slice(0, 4), parent, ...BASE.slice(5), '--crd', crd])
    assert.equal(bad.code, 1)
    assert.equal(bad.stdout, '')
    assert.equal(
      bad.stderr,
      'metactl: --parent: Website.example.com "shop" is invalid: spec.port: Invalid value: ' +
        '"string": must be of type integer\n'
    )
  })
})
