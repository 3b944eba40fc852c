import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
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
    // The package's command, and the script it runs by a path that exists: a user's project has
    // no `make node`.
    const build =
      /in \/nonexistent\/bin: run `metactl cluster install --runtime containerd` \(it runs `bash (\S+\/tools\/node\/build\.sh)`/.exec(
        text
      )?.[1]
    const images =
      /in \/nonexistent\/images: run `metactl cluster install --runtime containerd` \(it runs `bash (\S+\/tools\/node\/images\.sh)`/.exec(
        text
      )?.[1]
    assert.ok(build !== undefined && existsSync(build), text)
    assert.ok(images !== undefined && existsSync(images), text)
    const coredns =
      /coredns\.tar in \/nonexistent\/coredns: run `metactl cluster install --runtime containerd` \(it runs `bash (\S+\/tools\/coredns\/build\.sh)`/.exec(
        text
      )?.[1]
    assert.ok(coredns !== undefined && existsSync(coredns), text)
    assert.match(text, /kubelet, kube-proxy, containerd, .* in \/nonexistent\/bin/)
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
