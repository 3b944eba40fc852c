import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { missingPrerequisites, RealNodePrerequisiteError } from './node-binaries.js'
import { requireRealNodePrerequisites } from './node-binaries.js'

describe('real node prerequisites', () => {
  it('names the missing binaries and images with the command that builds them', () => {
    const missing = missingPrerequisites(
      {
        binDir: '/nonexistent/bin',
        imagesDir: '/nonexistent/images',
        corednsDir: '/nonexistent/coredns',
      },
      { PATH: '/nonexistent' }
    )
    const text = missing.join('\n')
    assert.match(text, /kubelet, kube-proxy, containerd, .* in \/nonexistent\/bin: run `make node`/)
    assert.match(text, /pause\.tar, web\.tar in \/nonexistent\/images: run `make node`/)
    assert.match(text, /coredns\.tar in \/nonexistent\/coredns: run `make node`/)
    assert.match(text, /unshare, nsenter, ip, iptables, conntrack, openssl on PATH/)
  })

  it('refuses with one error listing everything that is missing', () => {
    assert.throws(
      () => requireRealNodePrerequisites({ METACTL_NODE_BIN: '/nonexistent', PATH: '' }),
      (error: unknown) =>
        error instanceof RealNodePrerequisiteError &&
        error.message.startsWith('a real node cannot start on this machine; it needs:\n  - ')
    )
  })
})
