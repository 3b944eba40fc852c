// Stands in for the kubelet and the container runtime of one Pod, for tests that must run a
// container's command and args exactly as a cluster would, on a control plane that runs no
// containers:
// - the image is assembled from the Dockerfile's runtime stage (its COPY and `RUN ln -s` lines,
//   with dist/ compiled by tsc as its build stage does), under a temp dir that stands for `/`;
// - the argv is resolved as the kubelet does (`command` replaces ENTRYPOINT, `args` replace CMD);
// - the program runs in a user, network and mount namespace of its own (`unshare`): its own
//   loopback, so it listens on its manifest's ports (`:8081`, `:9999`) without meeting any other
//   process, and a ServiceAccount mount at /var/run/secrets/kubernetes.io/serviceaccount with the
//   KUBERNETES_SERVICE_* variables, so it finds the API server as in-cluster code does;
// - the API server and any host service (a hook) are reached through Unix-socket bridges
//   (test/support/netns-bridge.ts), and the test reaches the Pod's ports the same way, as the
//   kubelet's probes do.
import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { request } from 'node:http'
import { connect, createServer } from 'node:net'
import type { Server } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { readFileSync } from 'node:fs'

/** Why sandboxes cannot run here, or false when they can. */
export function sandboxUnavailable(): string | false {
  try {
    execFileSync('unshare', ['-rnm', 'true'], { stdio: 'ignore' })
    execFileSync('ip', ['-V'], { stdio: 'ignore' })
    return false
  } catch {
    return 'needs unprivileged user namespaces (unshare -rnm) and iproute2 (ip)'
  }
}

/** The runtime stage of the Dockerfile, assembled on the host. */
export interface Image {
  /** The directory that stands for the image's `/`. */
  readonly root: string
  readonly workdir: string
  readonly entrypoint: readonly string[]
  readonly cmd: readonly string[]
  remove(): void
}

function runtimeStage(dockerfile: string): string[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
  const from = lines.findLastIndex((l) => /^FROM\s/i.test(l))
  return lines.slice(from)
}

/** Builds the image's files from `context` (the repository) as the Dockerfile's last stage does. */
export function buildImage(contextDir: string): Image {
  const context = resolve(contextDir)
  const stage = runtimeStage(readFileSync(join(context, 'Dockerfile'), 'utf8'))
  const root = mkdtempSync(join(tmpdir(), 'image-root-'))
  let workdir = '/'
  let entrypoint: string[] = []
  let cmd: string[] = []
  const inImage = (path: string): string => join(root, resolve(workdir, path))
  // A failed step (tsc) leaves no half-built image behind.
  process.once('exit', () => {
    rmSync(root, { recursive: true, force: true })
  })
  for (const line of stage) {
    const [instruction = '', ...rest] = line.split(/\s+/)
    const text = line.slice(instruction.length).trim()
    if (instruction === 'WORKDIR') workdir = resolve(workdir, text)
    else if (instruction === 'ENTRYPOINT') entrypoint = JSON.parse(text) as string[]
    else if (instruction === 'CMD') cmd = JSON.parse(text) as string[]
    else if (instruction === 'COPY' && rest[0] === '--from=build') {
      // The build stage's `npm run build`: tsc into the image's dist/.
      execFileSync(process.execPath, [
        join(context, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(context, 'tsconfig.build.json'),
        '--outDir',
        inImage(rest.at(-1) ?? ''),
      ])
    } else if (instruction === 'COPY') {
      const target = rest.at(-1) ?? ''
      for (const source of rest.slice(0, -1)) {
        const to = target.endsWith('/') ? join(inImage(target), source) : inImage(target)
        mkdirSync(dirname(to), { recursive: true })
        cpSync(join(context, source), to, { recursive: true })
      }
    } else if (instruction === 'RUN' && text.startsWith('ln -s ')) {
      const [, , from = '', to = ''] = text.split(/\s+/)
      mkdirSync(dirname(join(root, to)), { recursive: true })
      symlinkSync(join(root, from), join(root, to))
    } else if (instruction === 'RUN' && /^npm ci\b/.test(text)) {
      // Production dependencies: the repository's (a superset) serve.
      mkdirSync(inImage('.'), { recursive: true })
      symlinkSync(join(context, 'node_modules'), inImage('node_modules'))
    }
  }
  return {
    root,
    workdir,
    entrypoint,
    cmd,
    remove: () => {
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A container's `command` and `args`, as in a Pod spec. */
export interface ContainerCommand {
  readonly command?: readonly string[]
  readonly args?: readonly string[]
}

/**
 * The argv the runtime executes: `command` replaces ENTRYPOINT (and then CMD is dropped), `args`
 * replace CMD.
 */
export function kubeletArgv(
  image: Pick<Image, 'entrypoint' | 'cmd'>,
  c: ContainerCommand
): string[] {
  if (c.command !== undefined) return [...c.command, ...(c.args ?? [])]
  return [...image.entrypoint, ...(c.args ?? image.cmd)]
}

/** What the Pod is given: its ServiceAccount and the host services it may reach. */
export interface SandboxOptions {
  readonly image: Image
  readonly argv: readonly string[]
  readonly apiServer: { readonly host: string; readonly port: number }
  readonly serviceAccount: {
    readonly token: string
    readonly caPem: string
    readonly namespace: string
  }
  readonly podName: string
  /** Loopback ports of host services (a hook) the Pod reaches at the same port. */
  readonly hostPorts?: readonly number[]
  /** The Pod's ports the test reaches through {@link PodSandbox.get}. */
  readonly podPorts: readonly number[]
}

/** A running Pod. */
export interface PodSandbox {
  readonly process: ChildProcess
  /** stdout and stderr, line by line. */
  readonly lines: string[]
  readonly exited: Promise<number | string>
  /** GET `path` on the Pod's `port`, as a kubelet probe or a scrape would. */
  get(port: number, path: string): Promise<{ status: number; body: string }>
  /** Signals the program (SIGTERM by default) and waits for it to end; frees the bridges. */
  stop(signal?: NodeJS.Signals): Promise<number | string>
}

function bridgeToHost(socketPath: string, host: string, port: number): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect(port, host)
    socket.pipe(upstream).pipe(socket)
    socket.on('error', () => upstream.destroy())
    upstream.on('error', () => socket.destroy())
  })
  return new Promise((ok) =>
    server.listen(socketPath, () => {
      ok(server)
    })
  )
}

function sandboxFiles(dir: string, options: SandboxOptions): void {
  const sa = join(dir, 'serviceaccount')
  mkdirSync(sa)
  writeFileSync(join(sa, 'token'), options.serviceAccount.token)
  writeFileSync(join(sa, 'ca.crt'), options.serviceAccount.caPem)
  writeFileSync(join(sa, 'namespace'), options.serviceAccount.namespace)
}

/** The program's path on the host: a path in the image, or a name on PATH (node: the host's). */
function hostProgram(image: Image, program: string): string {
  if (!program.includes('/')) return program === 'node' ? process.execPath : program
  const path = join(image.root, isAbsolute(program) ? program : resolve(image.workdir, program))
  if (!existsSync(path)) throw new Error(`${program} does not exist in the image`)
  return path
}

/** Starts the Pod's program in its sandbox. */
export async function runPod(options: SandboxOptions): Promise<PodSandbox> {
  const dir = mkdtempSync(join(tmpdir(), `pod-${options.podName}-`))
  sandboxFiles(dir, options)
  const servers: Server[] = []
  const specs: string[] = []
  for (const [host, port] of [
    [options.apiServer.host, options.apiServer.port] as const,
    ...(options.hostPorts ?? []).map((p) => ['127.0.0.1', p] as const),
  ]) {
    const path = join(dir, `host-${port}.sock`)
    servers.push(await bridgeToHost(path, host, port))
    specs.push(`tcp:${port}=${path}`)
  }
  for (const port of options.podPorts) specs.push(`unix:${join(dir, `pod-${port}.sock`)}=${port}`)
  const [program = '', ...args] = options.argv
  const ready = join(dir, 'bridge-ready')
  const script = [
    'set -e',
    'mount -t tmpfs tmpfs /run',
    'mkdir -p /run/secrets/kubernetes.io',
    `cp -r ${JSON.stringify(join(dir, 'serviceaccount'))} /run/secrets/kubernetes.io/`,
    'ip link set lo up',
    `"${process.execPath}" --import tsx ${JSON.stringify(join(import.meta.dirname, 'netns-bridge.ts'))} "$@" &`,
    `while [ ! -e ${JSON.stringify(ready)} ]; do sleep 0.05; done`,
  ].join('\n')
  const child = spawn(
    'unshare',
    [
      '-rnm',
      'sh',
      '-c',
      // The bridge's arguments come first; the container's argv follows the `--` marker.
      `${script}\nwhile [ "$1" != -- ]; do shift; done; shift\ncd ${JSON.stringify(join(options.image.root, options.image.workdir))}\nexec "$@"`,
      'sh',
      ready,
      ...specs,
      '--',
      hostProgram(options.image, program),
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: `${dirname(process.execPath)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        HOME: dir,
        HOSTNAME: options.podName,
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: String(options.apiServer.port),
      },
    }
  )
  return sandbox(child, dir, servers)
}

function sandbox(child: ChildProcess, dir: string, servers: Server[]): PodSandbox {
  const lines: string[] = []
  for (const stream of [child.stdout, child.stderr])
    if (stream !== null) createInterface({ input: stream }).on('line', (l) => lines.push(l))
  const exited = new Promise<number | string>((ok) => {
    child.once('exit', (code, signal) => {
      ok(code ?? signal ?? -1)
    })
  })
  return {
    process: child,
    lines,
    exited,
    get: (port, path) =>
      new Promise((ok, fail) => {
        const req = request({ socketPath: join(dir, `pod-${port}.sock`), path }, (res) => {
          let body = ''
          res.on('data', (chunk: Buffer) => (body += chunk.toString()))
          res.on('end', () => {
            ok({ status: res.statusCode ?? 0, body })
          })
        })
        req.on('error', fail)
        req.end()
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      const result = await exited
      for (const server of servers) server.close()
      rmSync(dir, { recursive: true, force: true })
      return result
    },
  }
}
