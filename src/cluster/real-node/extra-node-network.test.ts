import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { extraNodeNetworkCommands, hubLinkName } from './extra-node-network.js'
import { NODE_IP, realNodeLayout } from './real-node-layout.js'

describe('extra real node network', () => {
  const layout = realNodeLayout('/var/tmp/rn', 3)
  const commands = extraNodeNetworkCommands(layout, 4242)
  const line = (where: 'hub' | 'node'): string[] =>
    commands.filter((c) => c.where === where).map((c) => c.args.join(' '))

  it('creates the veth in the node and puts its other end in the hub namespace', () => {
    assert.ok(line('node').includes(`ip link add eth0 type veth peer name mnode3 netns 4242`))
    assert.equal(hubLinkName(3), 'mnode3')
  })

  it('routes everything of the node through the hub, and nothing through the host', () => {
    assert.ok(line('node').includes('ip addr add 10.245.0.3/32 dev eth0'))
    assert.ok(line('node').includes(`ip route add default via ${NODE_IP} dev eth0 src 10.245.0.3`))
  })

  it("routes the node's address and Pod subnet from the hub into its veth", () => {
    assert.deepEqual(line('hub').slice(1), [
      `ip route add 10.245.0.3/32 dev mnode3 src ${NODE_IP}`,
      'ip route add 10.244.2.0/24 via 10.245.0.3 dev mnode3',
    ])
  })
})
