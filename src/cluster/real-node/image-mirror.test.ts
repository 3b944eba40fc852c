import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { IMAGE_MIRROR_ADDRESS, mirrorHostsToml, registryHost } from './image-mirror.js'
import { NODE_IP } from './real-node-layout.js'

describe('image mirror registry hosts', () => {
  it('finds the registry of a reference as containerd resolves it', () => {
    assert.equal(registryHost('docker.io/library/busybox:latest'), 'docker.io')
    assert.equal(registryHost('busybox'), 'docker.io')
    assert.equal(registryHost('metacontroller/jsonnetd:0.1'), 'docker.io')
    assert.equal(registryHost('gcr.io/google_containers/pause:latest'), 'gcr.io')
    assert.equal(registryHost('localhost/x:1'), 'localhost')
    assert.equal(registryHost('127.0.0.1:5000/x:1'), '127.0.0.1:5000')
  })

  it('asks the mirror first, on the first node address every node reaches', () => {
    assert.equal(IMAGE_MIRROR_ADDRESS, `${NODE_IP}:5000`)
    assert.match(mirrorHostsToml('gcr.io'), /^server = "https:\/\/gcr\.io"$/m)
    assert.match(mirrorHostsToml('docker.io'), /^server = "https:\/\/registry-1\.docker\.io"$/m)
    assert.match(mirrorHostsToml('gcr.io'), /\[host\."http:\/\/10\.245\.0\.1:5000"\]/)
  })
})
