/**
 * The real node's cgroup: one directory, created in every cgroup v1 hierarchy before the kubelet
 * starts (its `cgroupRoot` must exist in all of them), and removed with everything under it when
 * the cluster goes down.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const CGROUP_FS = '/sys/fs/cgroup'

/**
 * Lists the mount points of the cgroup v1 hierarchies (`/sys/fs/cgroup/cpu`, …) from a
 * `/proc/self/mounts` text; named hierarchies (`name=systemd`) count too.
 */
export function cgroupV1Mounts(mountsText: string): string[] {
  return mountsText
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup' && fields[1] !== undefined)
    .map((fields) => fields[1] ?? '')
}

/** The cgroup v1 hierarchies of this machine. */
export function hostCgroupV1Mounts(): string[] {
  return cgroupV1Mounts(readFileSync('/proc/self/mounts', 'utf8')).filter((m) =>
    m.startsWith(`${CGROUP_FS}/`)
  )
}

/**
 * Creates `root` in every hierarchy. In cpuset, a new cgroup starts with no CPUs and no memory
 * nodes (no process could run in it), so it gets its parent's.
 */
export function createCgroupRoot(root: string, mounts: readonly string[]): void {
  for (const mount of mounts) {
    const dir = join(mount, root)
    mkdirSync(dir, { recursive: true })
    if (mount.endsWith('/cpuset')) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        writeFileSync(join(dir, file), readFileSync(join(mount, file), 'utf8'))
      }
    }
  }
}

/** Pids in `root` or below, in any hierarchy (containers, their shims' children). */
export function cgroupPids(root: string, mounts: readonly string[]): number[] {
  const pids = new Set<number>()
  const walk = (dir: string): void => {
    let text: string
    try {
      text = readFileSync(join(dir, 'cgroup.procs'), 'utf8')
    } catch {
      return
    }
    for (const line of text.split('\n')) if (line !== '') pids.add(Number(line))
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name))
    }
  }
  for (const mount of mounts) walk(join(mount, root))
  return [...pids]
}

/**
 * Removes `root` and every cgroup below it, deepest first, in every hierarchy; returns the
 * directories that could not be removed (a process still in them).
 */
export function removeCgroupRoot(root: string, mounts: readonly string[]): string[] {
  const left: string[] = []
  const remove = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) remove(join(dir, entry.name))
    }
    try {
      rmdirSync(dir)
    } catch {
      left.push(dir)
    }
  }
  for (const mount of mounts) {
    const dir = join(mount, root)
    if (existsSync(dir)) remove(dir)
  }
  return left
}
