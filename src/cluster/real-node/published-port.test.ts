import { strict as assert } from 'node:assert'
import { describe, it } from 'node:test'
import { parsePublishedPort, PublishedPortError } from './published-port.js'

describe('parsePublishedPort', () => {
  it('reads HOSTPORT:NODEPORT', () => {
    assert.deepEqual(parsePublishedPort('8080:30080'), { hostPort: 8080, nodePort: 30080 })
    assert.deepEqual(parsePublishedPort('1:32767'), { hostPort: 1, nodePort: 32767 })
  })

  it('refuses a node port outside the NodePort range, saying which range', () => {
    assert.throws(() => parsePublishedPort('8080:80'), /NodePort range 30000-32767/)
    assert.throws(() => parsePublishedPort('8080:32768'), PublishedPortError)
  })

  it('refuses text that is not two ports', () => {
    for (const text of ['8080', '0:30080', '70000:30080', 'a:30080', '8080:30080:1', '']) {
      assert.throws(() => parsePublishedPort(text), /is not HOSTPORT:NODEPORT/, text)
    }
  })
})
