// Proves the user-facing `metactl cluster` commands: `up` prints a working kubeconfig, `status`
// reports readiness, a second `up` refuses to start twice, and `down` leaves no process and no
// volume behind.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { metactl } from '../support/run-metactl.js'
import { readControlPlaneState } from '../../src/cluster/control-plane-state.js'
import { isProcessRunning } from '../../src/cluster/managed-process.js'

const exec = promisify(execFile)

describe('metactl cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-cli-'))

  after(async () => {
    await metactl(['cluster', 'down', '--dir', dir])
    rmSync(dir, { recursive: true, force: true })
  })

  it('starts a cluster that kubectl can use, reports it and its nodes, refuses a second one, and stops it', async () => {
    const up = await metactl(['cluster', 'up', '--dir', dir, '--nodes', '2'])
    assert.equal(up.code, 0, up.stderr)
    const exported = /^export KUBECONFIG=(.+)$/m.exec(up.stdout)
    assert.ok(exported?.[1], `no export line in: ${up.stdout}`)
    const kubeconfig = exported[1]

    const { stdout } = await exec('kubectl', ['--kubeconfig', kubeconfig, 'get', 'namespaces'])
    assert.match(stdout, /^default\s+Active/m)

    const status = await metactl(['cluster', 'status', '--dir', dir])
    assert.equal(status.code, 0, status.stdout + status.stderr)
    assert.match(status.stdout, /: ready$/m)
    assert.match(status.stdout, /^nodes: 2$/m)
    assert.match(status.stdout, /^\s+metactl-node-0\s+Ready\s+pods \d+\/110$/m)
    assert.match(status.stdout, /^\s+metactl-node-1\s+Ready\s+pods \d+\/110$/m)
    const nodes = await exec('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes'])
    assert.match(nodes.stdout, /^metactl-node-1\s+Ready\s/m)

    const again = await metactl(['cluster', 'up', '--dir', dir])
    assert.equal(again.code, 1)
    assert.match(again.stderr, /already running in/)

    const state = readControlPlaneState(dir)
    assert.ok(state)
    assert.ok(existsSync(join(dir, 'volumes')), 'the cluster has a volumes directory')
    assert.deepEqual(
      state.processes.map((p) => p.name),
      ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']
    )

    const down = await metactl(['cluster', 'down', '--dir', dir])
    assert.equal(down.code, 0, down.stderr)
    assert.deepEqual(
      state.processes.filter((p) => isProcessRunning(p.pid, p.command)).map((p) => p.name),
      []
    )
    // The volumes of the default StorageClass go with the cluster.
    assert.equal(existsSync(join(dir, 'volumes')), false)
    const stopped = await metactl(['cluster', 'status', '--dir', dir])
    assert.equal(stopped.code, 1)
    assert.match(stopped.stdout, /stopped/)
  })

  it('refuses a --nodes that is not a count', async () => {
    const { code, stderr } = await metactl(['cluster', 'up', '--dir', dir, '--nodes', 'two'])
    assert.equal(code, 1)
    assert.match(stderr, /--nodes must be an integer from 0 to 256, got "two"/)
  })

  it('refuses a --publish that is not HOSTPORT:NODEPORT, and --publish without a real node', async () => {
    const bad = await metactl([
      'cluster',
      'up',
      '--dir',
      dir,
      '--runtime',
      'containerd',
      '--publish',
      '8080:80',
    ])
    assert.equal(bad.code, 1)
    assert.match(
      bad.stderr,
      /--publish "8080:80": the node port must be in the NodePort range 30000-32767/
    )
    const kwok = await metactl(['cluster', 'up', '--dir', dir, '--publish', '8080:30080'])
    assert.equal(kwok.code, 1)
    assert.match(kwok.stderr, /--publish and --image need a real node: add --runtime containerd/)
  })

  it('refuses --real-nodes without a real node, or beyond 8, before starting anything', async () => {
    const simulated = await metactl(['cluster', 'up', '--dir', dir, '--real-nodes', '2'])
    assert.equal(simulated.code, 1)
    assert.match(simulated.stderr, /--real-nodes needs --runtime containerd/)
    const tooMany = await metactl([
      'cluster',
      'up',
      '--dir',
      dir,
      '--runtime',
      'containerd',
      '--real-nodes',
      '9',
    ])
    assert.equal(tooMany.code, 1)
    assert.match(tooMany.stderr, /--real-nodes must be an integer from 1 to 8, got "9"/)
  })

  it('names the missing binaries and the command that installs them', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'metactl-nobin-'))
    try {
      const { code, stderr } = await metactl(['cluster', 'up', '--dir', join(empty, 'c')], {
        env: { METACTL_CONTROLPLANE_BIN: empty },
      })
      assert.equal(code, 1)
      assert.match(
        stderr,
        /missing from .*: etcd, kube-apiserver, kube-controller-manager, kube-scheduler/
      )
      assert.match(stderr, /Install them with `npx metactl cluster install`/)
      assert.doesNotMatch(stderr, /at .*\.ts:\d+/, 'no stack trace for a user error')
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
