import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { controllerRevisionHash, controllerRevisionName } from './revision-name.js'

describe('controllerRevisionHash', () => {
  it('hashes the UID then the patch encoded as Go encodes it (sorted keys, escaped <)', () => {
    // Expected value computed outside this code: sha1(b'uid-1' + b'{"spec":{"a":1,"b":"\u003c"}}').
    assert.equal(
      controllerRevisionHash('uid-1', { spec: { b: '<', a: 1 } }),
      'cc1a88fdc19c533cc7bc64908e1bdaa42fd17c50'
    )
  })

  it('differs for another parent UID with the same patch', () => {
    const patch = { spec: { replicas: 3 } }
    assert.notEqual(controllerRevisionHash('a', patch), controllerRevisionHash('b', patch))
  })
})

describe('controllerRevisionName', () => {
  it('prefixes the hash with <plural>.<group>, and core for the core group', () => {
    const patch = { spec: {} }
    const hash = controllerRevisionHash('u', patch)
    assert.equal(
      controllerRevisionName('catsets', 'ctl.example.com', 'u', patch),
      `catsets.ctl.example.com-${hash}`
    )
    assert.equal(controllerRevisionName('pods', '', 'u', patch), `pods.core-${hash}`)
  })

  it('cuts the prefix so the name is at most 253 characters, keeping the whole hash', () => {
    const patch = { spec: {} }
    const name = controllerRevisionName('r'.repeat(300), 'g', 'u', patch)
    assert.equal(name.length, 253)
    assert.ok(name.endsWith(`-${controllerRevisionHash('u', patch)}`))
  })
})
