/**
 * The host directories local clusters created as mount points (`/run/containerd` of a real node,
 * `/tmp/hostpath_pv` of the volumes, …), kept in one file for all clusters of this user: the
 * cluster that created one may go down while another still mounts there, so whichever goes down
 * last removes it.
 *
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'

/** Path of the registry file. */
export function createdDirsRegistryPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  return join(cache, 'metacontroller-ts', 'real-node-created-dirs.json')
}

/** The directories recorded as created by a real node's cluster and not removed yet. */
export function readCreatedDirs(path: string = createdDirsRegistryPath()): string[] {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'))
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  } catch {
    return []
  }
}

/** Replaces the recorded directories. */
export function writeCreatedDirs(
  dirs: readonly string[],
  path: string = createdDirsRegistryPath()
): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify([...new Set(dirs)].sort())}\n`)
}

/**
 * Tells whether any process's mount namespace has a mount on `dir` (another real node's cluster
 * still running): removing the directory would detach that mount from under it.
 */
export function mountedElsewhere(dir: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let text: string
    try {
      text = readFileSync(`/proc/${entry}/mountinfo`, 'utf8')
    } catch {
      continue
    }
    // Field 5 of a mountinfo line is the mount point.
    if (text.split('\n').some((line) => line.split(' ')[4] === dir)) return true
  }
  return false
}
