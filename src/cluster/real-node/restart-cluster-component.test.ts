import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { isProcessRunning } from '../managed-process.js'
import {
  ComponentRestartError,
  environmentOf,
  replacePid,
  restartClusterComponent,
  splitProcText,
} from './restart-cluster-component.js'
import { realNodeLayout } from './real-node-layout.js'
import { readRealNodeState, writeRealNodeState } from './real-node-state.js'

const SLEEP = '/bin/sleep'

function startSleep(seconds: string): number {
  const child = spawn(SLEEP, [seconds], { detached: true, stdio: 'ignore', cwd: tmpdir() })
  child.unref()
  assert.ok(child.pid !== undefined)
  return child.pid
}

async function waitRunning(pid: number): Promise<void> {
  // The nsenter wrapper execs the command: until then argv[0] is nsenter's.
  for (let i = 0; i < 100 && !isProcessRunning(pid, SLEEP); i++) {
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('restartClusterComponent', () => {
  it('splits /proc text and environments, and replaces only the named pid', () => {
    assert.deepEqual(splitProcText('a\0b c\0\0'), ['a', 'b c'])
    assert.deepEqual(environmentOf(['PATH=/x:/y', 'A=b=c', 'junk']), { PATH: '/x:/y', A: 'b=c' })
    const records = [
      { name: 'containerd', pid: 1, command: '/c' },
      { name: 'kubelet', pid: 2, command: '/k' },
    ]
    assert.deepEqual(replacePid(records, 'kubelet', 9), [
      records[0],
      { name: 'kubelet', pid: 9, command: '/k' },
    ])
  })

  it(
    'restarts the recorded process with its argv in its namespaces and records the new pid',
    { skip: process.getuid?.() === 0 ? false : 'needs root (nsenter)' },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'metactl-restart-'))
      const layout = realNodeLayout(dir)
      mkdirSync(layout.logsDir, { recursive: true })
      const victim = startSleep('601')
      const anchor = startSleep('602')
      let restarted: number | undefined
      try {
        writeRealNodeState(layout.stateFile, {
          netns: '',
          mntns: '',
          cgroupRoot: '/x',
          cgroupMounts: [],
          createdDirs: [],
          apiServerPort: 1,
          processes: [
            { name: 'anchor', pid: anchor, command: SLEEP },
            { name: 'kubelet', pid: victim, command: SLEEP },
          ],
        })
        const result = await restartClusterComponent(dir, 'kubelet')
        restarted = result.newPid
        await waitRunning(result.newPid)
        assert.equal(result.oldPid, victim)
        // With its command: a killed child of this test is a zombie until Node reaps it.
        assert.equal(isProcessRunning(victim, SLEEP), false, 'the old process is gone')
        assert.equal(isProcessRunning(anchor, SLEEP), true, 'the other process is untouched')
        assert.deepEqual(splitProcText(readFileSync(`/proc/${result.newPid}/cmdline`, 'utf8')), [
          SLEEP,
          '601',
        ])
        const state = readRealNodeState(layout.stateFile)
        assert.equal(state?.processes.find((p) => p.name === 'kubelet')?.pid, result.newPid)
        assert.equal(result.forced, false)
        await assert.rejects(restartClusterComponent(dir, 'etcd'), ComponentRestartError)
      } finally {
        for (const pid of [victim, anchor, restarted ?? victim]) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // Already gone.
          }
        }
        rmSync(dir, { recursive: true, force: true })
      }
    }
  )

  it(
    'kills a process that outlives the signal for the grace period with SIGKILL',
    { skip: process.getuid?.() === 0 ? false : 'needs root (nsenter)' },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'metactl-restart-'))
      const layout = realNodeLayout(dir)
      mkdirSync(layout.logsDir, { recursive: true })
      // Resolves once its SIGTERM handler is in place (it says so).
      const stubborn = async (): Promise<number> => {
        const script =
          "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)"
        const child = spawn(process.execPath, ['-e', script], {
          detached: true,
          stdio: ['ignore', 'pipe', 'ignore'],
        })
        await new Promise((resolve) => child.stdout.once('data', resolve))
        child.stdout.destroy()
        child.unref()
        assert.ok(child.pid !== undefined)
        return child.pid
      }
      const pids = [await stubborn(), startSleep('603')]
      try {
        writeRealNodeState(layout.stateFile, {
          ...{ netns: '', mntns: '', cgroupRoot: '/x', cgroupMounts: [], createdDirs: [] },
          apiServerPort: 1,
          processes: [
            { name: 'kube-apiserver', pid: pids[0] ?? 0, command: process.execPath },
            { name: 'anchor', pid: pids[1] ?? 0, command: SLEEP },
          ],
        })
        const result = await restartClusterComponent(dir, 'kube-apiserver', {
          signal: 'SIGTERM',
          graceMs: 300,
        })
        pids.push(result.newPid)
        assert.equal(result.forced, true)
        assert.equal(isProcessRunning(result.oldPid, process.execPath), false)
      } finally {
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // Already gone.
          }
        }
        rmSync(dir, { recursive: true, force: true })
      }
    }
  )
})
