import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cgroupV1Mounts } from './cgroup-root.js'

describe('cgroup v1 hierarchies', () => {
  it('lists every v1 hierarchy, named ones included, and not the v2 mount or the tmpfs', () => {
    const mounts = [
      'tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0',
      'cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0',
      'cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0',
      'cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0',
      'cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0',
      '',
    ].join('\n')
    assert.deepEqual(cgroupV1Mounts(mounts), [
      '/sys/fs/cgroup/cpu',
      '/sys/fs/cgroup/cpuset',
      '/sys/fs/cgroup/systemd',
    ])
  })
})
