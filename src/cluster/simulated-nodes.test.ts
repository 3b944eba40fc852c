import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAllDocuments } from 'yaml'
import {
  isNodeReady,
  kwokConfigYaml,
  PODS_PER_NODE,
  SIMULATED_NODE_ANNOTATION,
  simulatedNode,
  simulatedNodeName,
} from './simulated-nodes.js'

describe('simulated nodes', () => {
  it('gives each node its own name, Pod CIDR, address and capacity for 110 Pods', () => {
    const [first, second] = [simulatedNode(0), simulatedNode(1)]
    assert.equal(first.metadata.name, 'metactl-node-0')
    assert.equal(simulatedNodeName(1), second.metadata.name)
    assert.equal(first.metadata.annotations?.[SIMULATED_NODE_ANNOTATION], 'fake')
    assert.deepEqual(first['spec'], { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24'] })
    assert.deepEqual((second['spec'] as { podCIDRs: string[] }).podCIDRs, ['10.244.1.0/24'])
    const status = first['status'] as { capacity: { pods: string }; allocatable: { pods: string } }
    assert.equal(status.capacity.pods, String(PODS_PER_NODE))
    assert.equal(status.allocatable.pods, '110')
    assert.throws(() => simulatedNode(256), RangeError)
  })

  it('writes one KWOK Stage per lifecycle step, as valid YAML', () => {
    const docs = parseAllDocuments(kwokConfigYaml()).map((d) => d.toJS() as Record<string, unknown>)
    assert.deepEqual(
      docs.map((d) => [d['kind'], (d['metadata'] as { name: string }).name]),
      [
        ['Stage', 'node-ready'],
        ['Stage', 'node-heartbeat'],
        ['Stage', 'pod-running'],
        ['Stage', 'pod-succeeded'],
        ['Stage', 'pod-terminated'],
      ]
    )
    const terminated = docs[4]?.['spec'] as { next: { delete?: boolean } }
    assert.equal(terminated.next.delete, true)
  })

  it('reads a Node Ready only from a True Ready condition', () => {
    const node = (conditions: unknown): Parameters<typeof isNodeReady>[0] => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: { conditions },
    })
    assert.equal(isNodeReady(node([{ type: 'Ready', status: 'True' }])), true)
    assert.equal(isNodeReady(node([{ type: 'Ready', status: 'Unknown' }])), false)
    assert.equal(isNodeReady(node(undefined)), false)
  })
})
