// Stands in for the kubelet of a hook Deployment in the upstream examples: the engine runs on the
// host, where no Service routes, so once the Deployment and the ConfigMaps and Secrets its volumes
// name exist, their files are written to a temp dir and the container's Python program runs on
// the host (test/support/host-python-hook.py) on a loopback port in place of its container port.
// (The examples whose hooks are images of ours run in-cluster instead:
// test/images/upstream-examples-in-cluster.test.ts.)
import { execFile, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from '../../src/testing/index.js'

/** Runs `kubectl ...args` with `KUBECONFIG`; resolves with stdout, or undefined when it fails. */
export function kubectl(kubeconfig: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig } }, (e, out) => {
      resolve(e === null ? out : undefined)
    })
  })
}

interface Volume {
  readonly name: string
  readonly configMap?: { readonly name: string }
  readonly secret?: { readonly secretName: string }
}

interface Container {
  readonly command?: string[]
  readonly volumeMounts?: { readonly name: string; readonly mountPath: string }[]
}

/** A Deployment's program running on the host. */
export interface HostDeployment {
  readonly process: ChildProcess
  /** Everything the program wrote to stdout and stderr. */
  readonly output: string[]
  stop(): void
}

async function volumeFiles(
  kubeconfig: string,
  namespace: string,
  volume: Volume
): Promise<Record<string, string> | undefined> {
  const [kind, name] =
    volume.configMap !== undefined
      ? ['configmap', volume.configMap.name]
      : ['secret', volume.secret?.secretName ?? '']
  const text = await kubectl(kubeconfig, ['get', kind, name, '-n', namespace, '-o', 'json'])
  if (text === undefined) return undefined
  const data = (JSON.parse(text) as { data?: Record<string, string> }).data ?? {}
  return kind === 'secret'
    ? Object.fromEntries(
        Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])
      )
    : data
}

// What runs the container's Python program on the host, from its copied volume.
function hostCommand(
  container: Container,
  mounts: Record<string, string>,
  port: number
): [string, string[]] {
  const program = container.command?.at(-1) ?? ''
  const mounted = Object.entries(mounts).find(([path]) => program.startsWith(`${path}/`))
  if (mounted === undefined) throw new Error(`the program ${program} is not on a volume`)
  const local = mounted[1] + program.slice(mounted[0].length)
  const runner = join(import.meta.dirname, 'host-python-hook.py')
  return ['python3', [runner, local, JSON.stringify(mounts), String(port)]]
}

/**
 * Waits for Deployment `namespace/name` and its volumes' objects, then runs its first container's
 * program on the host with the mounts copied locally, serving on `port`: `python <program>`.
 */
export async function runDeploymentOnHost(
  kubeconfig: string,
  namespace: string,
  name: string,
  port: number
): Promise<HostDeployment> {
  const dir = mkdtempSync(join(tmpdir(), `host-${name}-`))
  const { volumes, container } = await waitFor(
    async () => {
      const text = await kubectl(kubeconfig, ['get', 'deploy', name, '-n', namespace, '-o', 'json'])
      if (text === undefined) return undefined
      const spec = (
        JSON.parse(text) as {
          spec: { template: { spec: { volumes?: Volume[]; containers: Container[] } } }
        }
      ).spec.template.spec
      const container = spec.containers[0]
      return container === undefined ? undefined : { volumes: spec.volumes ?? [], container }
    },
    { timeoutMs: 120_000, intervalMs: 500, description: `Deployment ${namespace}/${name}` }
  )
  const mounts: Record<string, string> = {}
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name)
    if (volume === undefined) continue
    const files = await waitFor(() => volumeFiles(kubeconfig, namespace, volume), {
      timeoutMs: 120_000,
      intervalMs: 500,
      description: `the objects of volume ${mount.name}`,
    })
    const local = join(dir, mount.name)
    mkdirSync(local)
    for (const [file, content] of Object.entries(files)) writeFileSync(join(local, file), content)
    mounts[mount.mountPath] = local
  }
  const [command, args] = hostCommand(container, mounts, port)
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()))
  return {
    process: child,
    output,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
