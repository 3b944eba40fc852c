import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crdFixture } from '../../test/support/crd-fixture.js'
import { crdToTypeScript, schemaToType } from './crd-types.js'
import { CrdSchemaError } from './crd-schema.js'

const crd = crdFixture({
  kind: 'Greeting',
  plural: 'greetings',
  scope: 'Namespaced',
  schema: {
    type: 'object',
    required: ['spec'],
    properties: {
      spec: {
        type: 'object',
        required: ['message'],
        properties: {
          message: { type: 'string', description: 'What to say.' },
          replicas: { type: 'integer' },
          mode: { type: 'string', enum: ['loud', "it's"] },
          'odd-name': { type: 'boolean' },
        },
      },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  },
})

describe('crdToTypeScript', () => {
  it('writes the object, spec and status types with required fields and docs', () => {
    const text = crdToTypeScript(crd)
    assert.match(text, /^export type GreetingSpec = \{$/m)
    assert.match(text, /^ {2}\/\*\* What to say\. \*\/\n {2}message: string$/m)
    assert.match(text, /^ {2}replicas\?: number$/m)
    assert.match(text, /^ {2}mode\?: 'loud' \| 'it\\'s'$/m)
    assert.match(text, /^ {2}"odd-name"\?: boolean$/m)
    assert.match(text, /^export type GreetingStatus = Record<string, unknown>$/m)
    assert.match(
      text,
      /^ {2}apiVersion: 'example.com\/v1'\n {2}kind: 'Greeting'\n {2}metadata: ObjectMeta\n {2}spec: GreetingSpec\n {2}status\?: GreetingStatus$/m
    )
  })

  it('maps the structural schema features', () => {
    assert.equal(schemaToType({ 'x-kubernetes-int-or-string': true }), 'number | string')
    assert.equal(schemaToType({ type: 'array', items: { type: 'string' } }), 'Array<string>')
    assert.equal(
      schemaToType({ type: 'object', additionalProperties: { type: 'integer' } }),
      'Record<string, number>'
    )
    assert.equal(schemaToType({ type: 'string', nullable: true }), 'string | null')
  })

  it('names what is wrong with a manifest that is not a usable CRD', () => {
    assert.throws(() => crdToTypeScript({ kind: 'ConfigMap' }), CrdSchemaError)
    assert.throws(
      () => crdToTypeScript(crd, { version: 'v2' }),
      /has no version v2 \(versions: v1\)/
    )
  })
})
