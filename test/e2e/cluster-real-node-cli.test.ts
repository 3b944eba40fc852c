// Proves `metactl cluster up --runtime containerd` as a user runs it: the printed kubeconfig
// reaches a real node with KWOK nodes beside it, kubectl runs a container on the real node (and,
// from an archive given with --image, one whose image is pulled Always), and
// `down` stops everything and reports the namespaces and cgroup removed (root, `make node`).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { metactl } from '../support/run-metactl.js'
import { realNodeLayout } from '../../src/cluster/real-node/real-node-layout.js'
import { waitFor } from '../../src/runtime/clock/wait-for.js'
import { exampleImageArchive } from '../support/example-image-archive.js'

const exec = promisify(execFile)

describe('metactl cluster up --runtime containerd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-cli-rn-'))

  after(async () => {
    await metactl(['cluster', 'down', '--dir', dir])
    rmSync(dir, { recursive: true, force: true })
  })

  it('starts a real node beside a KWOK node, runs a container on it, and takes it all down', async () => {
    const up = await metactl([
      'cluster',
      'up',
      '--runtime',
      'containerd',
      '--nodes',
      '1',
      '--image',
      exampleImageArchive('busybox'),
      '--dir',
      dir,
    ])
    assert.equal(up.code, 0, up.stderr)
    assert.match(
      up.stdout,
      /^Cluster ready: https:\/\/127\.0\.0\.1:\d+ \(node metactl-real-node, containerd\)$/m
    )
    const kubeconfig = join(dir, 'kubeconfig')
    const kubectl = (...args: string[]) => exec('kubectl', ['--kubeconfig', kubeconfig, ...args])

    const nodes = await kubectl('get', 'nodes', '--no-headers')
    assert.match(nodes.stdout, /^metactl-real-node\s+Ready/m)
    assert.match(nodes.stdout, /^metactl-node-0\s+Ready/m)

    await kubectl(
      'run',
      'web',
      '--image=metactl.local/web:1',
      '--image-pull-policy=Never',
      '--overrides={"spec":{"nodeName":"metactl-real-node"}}'
    )
    const containerId = await waitFor(
      async () => {
        const { stdout } = await kubectl(
          'get',
          'pod',
          'web',
          '-o',
          'jsonpath={.status.phase} {.status.containerStatuses[0].containerID}'
        )
        const [phase, id] = stdout.split(' ')
        return phase === 'Running' ? id : undefined
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'Pod web to run on the real node' }
    )
    assert.match(containerId, /^containerd:\/\/[0-9a-f]{64}$/)

    // An untagged image is pulled Always: the archive given with --image answers that pull.
    await kubectl(
      'run',
      'bb',
      '--image=busybox',
      '--restart=Never',
      '--overrides={"spec":{"nodeName":"metactl-real-node"}}',
      '--',
      'sh',
      '-c',
      'echo pulled'
    )
    await waitFor(
      async () => {
        const { stdout } = await kubectl('get', 'pod', 'bb', '-o', 'jsonpath={.status.phase}')
        return stdout === 'Succeeded'
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'Pod bb (busybox, pulled Always)' }
    )
    const pulled = await kubectl(
      'get',
      'pod',
      'bb',
      '-o',
      'jsonpath={.spec.containers[0].imagePullPolicy}'
    )
    assert.equal(pulled.stdout, 'Always')
    assert.equal((await kubectl('logs', 'bb')).stdout.trim(), 'pulled')

    const down = await metactl(['cluster', 'down', '--dir', dir])
    assert.equal(down.code, 0, down.stderr)
    assert.match(down.stdout, /^stopped kubelet$/m)
    assert.match(down.stdout, /^namespaces, cgroup and mounts removed$/m)
    assert.equal(existsSync(realNodeLayout(dir).stateFile), false)
  })
})
