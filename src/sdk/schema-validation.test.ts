import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CrdSchema } from './crd-schema.js'
import { validateAgainstSchema } from './schema-validation.js'

const schema: CrdSchema = {
  type: 'object',
  required: ['spec'],
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        mode: { type: 'string', enum: ['a', 'b'] },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { port: { type: 'integer' } } },
        },
        target: { 'x-kubernetes-int-or-string': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
}
const object = (spec?: unknown): unknown => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 'a' },
  ...(spec === undefined ? {} : { spec }),
})

describe('validateAgainstSchema', () => {
  it('accepts a matching object and ignores apiVersion, kind and metadata', () => {
    assert.deepEqual(
      validateAgainstSchema(object({ image: 'x', port: 80, target: 'http' }), schema),
      []
    )
  })

  it('names a missing spec instead of letting a hook read spec.image of undefined', () => {
    assert.deepEqual(validateAgainstSchema(object(), schema), [
      { path: 'spec', message: 'Required value' },
    ])
  })

  it('gives the path of each bad field', () => {
    const found = validateAgainstSchema(
      object({
        image: '',
        port: 70000,
        mode: 'c',
        ports: [{ port: 'x' }],
        target: 1.5,
        labels: { a: 1 },
      }),
      schema
    ).map((v) => v.path)
    assert.deepEqual(found, [
      'spec.image',
      'spec.port',
      'spec.mode',
      'spec.ports[0].port',
      'spec.target',
      'spec.labels.a',
    ])
  })

  it('reports a wrong type at the field', () => {
    assert.deepEqual(validateAgainstSchema(object({ image: 7 }), schema), [
      { path: 'spec.image', message: 'Invalid value: "integer": must be of type string' },
    ])
  })
})
