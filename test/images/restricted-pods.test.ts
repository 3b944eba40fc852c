// Every Pod we ship runs under the restricted Pod Security Standard on the real node: the
// namespaces `metacontroller` and `traefik` are labelled `pod-security.kubernetes.io/enforce=
// restricted` before anything is applied (the API server's PodSecurity admission then refuses
// any Pod that is not restricted, which the first test checks), then the chart's engine, `deploy/`
// (plain and sharded), the PodService example's hook, the hook of a `metactl init` project and
// Traefik's manifest are applied unchanged, and each Deployment must become available. The
// images built from our Dockerfiles run as non-root by their own `USER`: a Pod that asks only
// `runAsNonRoot` (no `runAsUser`) starts, which the kubelet allows only for a numeric non-root
// user in the image. Root, `make node`, the builder of `make images`, helm (`make helm`).
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { buildImage } from '../../src/cluster/images/image-builder.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { main } from '../../src/cli/main.js'

const exec = promisify(execFile)
const REPO = resolve(import.meta.dirname, '..', '..')
const OUT = join(REPO, '.tmp', 'images')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
const ENGINE_IMAGE = `ghcr.io/metacontroller-ts/metacontroller-ts:${VERSION}`
const HELM = join(
  process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'),
  'metacontroller-ts/helm/v4.3.2/helm'
)
const ENFORCE = 'pod-security.kubernetes.io/enforce'

/** The archive at `output` (built by dockerfile-builds.test.ts), or the same build, cached. */
async function image(tag: string, output: string, context: string, dockerfile?: string) {
  if (existsSync(output)) return output
  return buildImage({ context, tag, output, ...(dockerfile === undefined ? {} : { dockerfile }) })
}

describe('restricted Pod Security on the real node', { timeout: 30 * 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-restricted-'))
  const project = join(work, 'hello-controller')
  let cluster: RealNodeCluster | undefined
  const kubectl = async (...args: string[]): Promise<string> => {
    assert.ok(cluster, 'the cluster started')
    try {
      const { stdout, stderr } = await exec(
        'kubectl',
        ['--kubeconfig', cluster.kubeconfigPath, ...args],
        {
          maxBuffer: 16 * 1024 * 1024,
        }
      )
      return stdout + stderr
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string }
      throw new Error(`kubectl ${args.join(' ')}: ${e.stdout ?? ''}${e.stderr ?? ''}`, {
        cause: error,
      })
    }
  }
  // The Deployment's Pods are all ready, in a namespace that still enforces restricted.
  const available = async (namespace: string, deployment: string): Promise<void> => {
    await kubectl('-n', namespace, 'rollout', 'status', `deployment/${deployment}`, '--timeout=4m')
    const labels = await kubectl(
      ...['get', 'namespace', namespace, '-o', 'jsonpath={.metadata.labels}']
    )
    assert.match(labels, /"pod-security\.kubernetes\.io\/enforce":"restricted"/, deployment)
  }
  const restricted = async (namespace: string): Promise<void> => {
    await kubectl('create', 'namespace', namespace)
    await kubectl(
      'label',
      'namespace',
      namespace,
      `${ENFORCE}=restricted`,
      `${ENFORCE}-version=latest`
    )
  }

  before(async () => {
    const io = {
      out: () => undefined,
      err: (line: string) => {
        console.log(line)
      },
    }
    assert.equal(await main(['node', 'metactl', 'init', project], io), 0)
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit'], {
      cwd: project,
      stdio: 'ignore',
    })
    const appImages = execFileSync(join(REPO, 'tools/node/app-images.sh'), ['traefik'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
    const traefik = execFileSync('sh', ['-c', `ls "${appImages}"/traefik-*.tar | tail -1`], {
      encoding: 'utf8',
    }).trim()
    const archives = [
      await image(ENGINE_IMAGE, join(OUT, 'engine-dockerfile.tar'), REPO),
      await image(
        'podservice-hook:dev',
        join(OUT, 'podservice-hook-dockerfile.tar'),
        REPO,
        join(REPO, 'examples', 'podservice', 'Dockerfile')
      ),
      // A fresh project each run: built anew (its npm ci layer is cached).
      await buildImage({
        context: project,
        tag: 'hello-controller-hook:dev',
        output: join(work, 'hello-controller-hook.tar'),
      }),
      traefik,
    ]
    cluster = await startRealNodeCluster({ dir: join(work, 'cluster'), images: archives })
    await restricted('metacontroller')
    await restricted('traefik')
  })

  after(async () => {
    await cluster?.stop()
    rmSync(work, { recursive: true, force: true })
  })

  it('refuses a Pod that is not restricted (the namespaces enforce it)', async () => {
    await assert.rejects(
      kubectl('-n', 'metacontroller', 'run', 'plain', `--image=${ENGINE_IMAGE}`, '--restart=Never'),
      /violates PodSecurity "restricted:latest"/
    )
  })

  it("makes the chart's engine available", async () => {
    const release = ['metacontroller', join(REPO, 'deploy/helm/metacontroller-ts')]
    await exec(HELM, [
      ...['install', ...release, '--namespace', 'metacontroller'],
      ...['--kubeconfig', cluster?.kubeconfigPath ?? '', '--wait', '--timeout', '4m'],
    ])
    await available('metacontroller', 'metacontroller')
    await exec(HELM, ['uninstall', 'metacontroller', '--namespace', 'metacontroller', '--wait'], {
      env: { ...process.env, KUBECONFIG: cluster?.kubeconfigPath ?? '' },
    })
  })

  it('makes deploy/ (plain, then sharded) and both hooks available', async () => {
    await kubectl('apply', '-k', join(REPO, 'deploy/manifests'))
    await available('metacontroller', 'metacontroller')
    await kubectl('apply', '-k', join(REPO, 'deploy/sharded'))
    await available('metacontroller', 'metacontroller')
    await kubectl('apply', '-f', join(REPO, 'examples/podservice/hook-deployment.yaml'))
    await available('metacontroller', 'podservice-hook')
    await kubectl('apply', '-f', join(project, 'deploy/hook.yaml'))
    await available('metacontroller', 'hello-controller-hook')
  })

  it("makes Traefik's manifest available", async () => {
    await kubectl('apply', '-f', join(REPO, 'tools/traefik/ingress.yaml'))
    await available('traefik', 'traefik')
  })

  it("runs each image as non-root by the image's own USER", async () => {
    for (const [name, image] of [
      ['engine', ENGINE_IMAGE],
      ['podservice-hook', 'podservice-hook:dev'],
      ['scaffold-hook', 'hello-controller-hook:dev'],
    ] as const) {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `uid-${name}`, namespace: 'metacontroller' },
        spec: {
          restartPolicy: 'Never',
          // Restricted, with no runAsUser: the kubelet takes the image's USER and checks it.
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name,
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['node', '-e', 'console.log(`${process.getuid()}:${process.getgid()}`)'],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      }
      const file = join(work, `uid-${name}.json`)
      writeFileSync(file, JSON.stringify(pod))
      await kubectl('apply', '-f', file)
      await kubectl(
        ...['-n', 'metacontroller', 'wait', `pod/uid-${name}`],
        ...['--for=jsonpath={.status.phase}=Succeeded', '--timeout=2m']
      )
      assert.equal(
        (await kubectl('-n', 'metacontroller', 'logs', `uid-${name}`)).trim(),
        '1000:1000'
      )
    }
  })
})
