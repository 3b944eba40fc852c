// Proves the harness's failure paths against real binaries: a component that cannot start is
// named with its log tail, and a failed start leaves no process behind.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  ControlPlaneStartError,
  findControlPlaneBinaries,
  MissingBinariesError,
  startControlPlane,
} from '../../src/testing/index.js'
import { NODES } from '../../src/cluster/simulated-nodes.js'
import { readControlPlaneState } from '../../src/cluster/control-plane-state.js'
import { isProcessRunning } from '../../src/cluster/managed-process.js'
import { findFreePort } from '../../src/cluster/free-port.js'
import { createServer } from 'node:net'

// These start their own control planes (useExistingCluster: false), beside the shared one.
describe('control plane lifecycle', () => {
  it('starts the smaller plane with nodes: 0: no scheduler, no KWOK, no nodes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-nonodes-'))
    try {
      const plane = await startControlPlane({ dir, useExistingCluster: false, nodes: 0 })
      try {
        const state = readControlPlaneState(dir)
        assert.deepEqual(
          state?.processes.map((p) => p.name),
          ['etcd', 'kube-apiserver', 'kube-controller-manager']
        )
        assert.deepEqual((await plane.client.list(NODES)).items, [])
      } finally {
        await plane.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses to start with nodes when kube-scheduler or KWOK is not built', async () => {
    const binaries = findControlPlaneBinaries()
    await assert.rejects(
      startControlPlane({
        useExistingCluster: false,
        binaries: { ...binaries, kwok: undefined },
        nodes: 1,
      }),
      (error: unknown) =>
        error instanceof MissingBinariesError &&
        error.message.includes('kwok') &&
        error.message.includes('npx metactl cluster install')
    )
  })

  it('names kube-apiserver and shows its log when it refuses a flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-badflag-'))
    try {
      await assert.rejects(
        startControlPlane({
          dir,
          useExistingCluster: false,
          binaries: findControlPlaneBinaries(),
          apiServerFlags: ['--no-such-flag-for-test'],
        }),
        (error: unknown) => {
          assert.ok(error instanceof ControlPlaneStartError)
          assert.equal(error.component, 'kube-apiserver')
          assert.match(error.message, /exited during startup/)
          assert.match(error.message, /no-such-flag-for-test/)
          return true
        }
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses a taken apiserver port with a clear message and starts nothing', async () => {
    const port = await findFreePort()
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve))
    const dir = mkdtempSync(join(tmpdir(), 'metactl-port-'))
    try {
      await assert.rejects(
        startControlPlane({ dir, useExistingCluster: false, apiServerPort: port }),
        new RegExp(`port ${port} on 127.0.0.1 is already in use`)
      )
      const state = readControlPlaneState(dir)
      assert.equal(state, undefined)
    } finally {
      blocker.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('stops every process it started, the scheduler and KWOK included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-stop-'))
    try {
      const plane = await startControlPlane({ dir, useExistingCluster: false, nodes: 1 })
      const state = readControlPlaneState(dir)
      assert.ok(state)
      assert.deepEqual(
        state.processes.map((p) => p.name),
        ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']
      )
      assert.equal(state.nodes, 1)
      assert.deepEqual(plane.nodeNames, ['metactl-node-0'])
      assert.ok(state.processes.every((p) => isProcessRunning(p.pid, p.command)))
      await plane.stop()
      assert.deepEqual(
        state.processes.filter((p) => isProcessRunning(p.pid, p.command)).map((p) => p.name),
        []
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
