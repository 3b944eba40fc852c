// A lock across test processes that share one cluster: the upstream examples use fixed names
// (the `metacontroller` namespace's Service `metacontroller`, cluster-scoped CRDs), so two of
// their tests must not run at the same time even when node --test runs files in parallel.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Takes lock `name` for the cluster of `kubeconfig`; resolves with its release. */
export async function lockCluster(kubeconfig: string, name: string): Promise<() => void> {
  const key = createHash('sha256').update(`${kubeconfig}\0${name}`).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), `metactl-test-lock-${key}`)
  for (;;) {
    try {
      // mkdir is atomic: exactly one process creates the directory.
      mkdirSync(dir)
      writeFileSync(join(dir, 'pid'), String(process.pid))
      return () => {
        rmSync(dir, { recursive: true, force: true })
      }
    } catch {
      // A holder that died without releasing (SIGKILL) leaves its directory behind.
      let holder = NaN
      try {
        holder = Number(readFileSync(join(dir, 'pid'), 'utf8'))
      } catch {
        // Not written yet: the holder is between mkdir and writeFile.
      }
      if (Number.isInteger(holder) && !alive(holder)) rmSync(dir, { recursive: true, force: true })
      else await sleep(500)
    }
  }
}
