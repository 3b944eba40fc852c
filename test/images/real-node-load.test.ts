// `metactl cluster load` on a running real node (root, `make node`, the builder of `make images`):
// the engine image built from the repository's Dockerfile is loaded as an archive, a hook image
// of the builder's store by its name, with no restart of the cluster, and a Pod of each runs
// there with the Node.js the image carries (24), not the host's.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { buildImage } from '../../src/cluster/images/image-builder.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { main } from '../../src/cli/main.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { waitFor } from '../../src/runtime/clock/wait-for.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
const ENGINE_IMAGE = `ghcr.io/metacontroller-ts/metacontroller-ts:${VERSION}`
const ENGINE_ARCHIVE = join(REPO, '.tmp', 'images', 'engine-dockerfile.tar')
const HOOK_IMAGE = 'podservice-hook:dev'
const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true } as const

async function metactl(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(['node', 'metactl', ...argv], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  })
  return { code, out, err }
}

describe('metactl cluster load on a running real node', { timeout: 20 * 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-load-test-'))
  let cluster: RealNodeCluster | undefined

  before(async () => {
    // The archive of dockerfile-builds.test.ts, or the same build (its layers are cached).
    if (!existsSync(ENGINE_ARCHIVE)) {
      await buildImage({ context: REPO, tag: ENGINE_IMAGE, output: ENGINE_ARCHIVE })
    }
    await buildImage({
      context: REPO,
      dockerfile: join(REPO, 'examples', 'podservice', 'Dockerfile'),
      tag: HOOK_IMAGE,
      output: join(REPO, '.tmp', 'images', 'podservice-hook-dockerfile.tar'),
    })
    cluster = await startRealNodeCluster({ dir })
  })

  after(async () => {
    await cluster?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  // Runs `node --version` in a Pod of `image` (never pulled) and resolves with its log.
  async function nodeVersionIn(name: string, image: string): Promise<string> {
    assert.ok(cluster, 'the cluster started')
    const c = cluster
    await c.client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name, image, imagePullPolicy: 'Never', command: ['node', '--version'] }],
      },
    })
    await waitFor(
      async () => {
        const pod = await c.client.get(PODS, name, { namespace: 'default' })
        const phase = (pod['status'] as { phase?: string } | undefined)?.phase
        if (phase === 'Failed')
          throw new Error(`Pod ${name} failed: ${JSON.stringify(pod['status'])}`)
        return phase === 'Succeeded'
      },
      { timeoutMs: 120_000, intervalMs: 500, description: `Pod ${name} to succeed` }
    )
    const transport = new KubeTransport(c.config)
    try {
      const log = await transport.requestText({
        method: 'GET',
        path: `/api/v1/namespaces/default/pods/${name}/log`,
        accept: '*/*',
      })
      return log.trim()
    } finally {
      await transport.close()
    }
  }

  it('loads the engine archive built from the Dockerfile; its Pod runs Node 24', async () => {
    const { code, out, err } = await metactl(['cluster', 'load', '--dir', dir, ENGINE_ARCHIVE])
    assert.equal(code, 0, err.join('\n'))
    assert.ok(out.includes(`loaded ${ENGINE_IMAGE}`), out.join('\n'))
    assert.match(await nodeVersionIn('engine-node-version', ENGINE_IMAGE), /^v24\.\d+\.\d+$/)
  })

  it("loads an image of the builder's store by its name, exported on the way", async () => {
    const { code, out, err } = await metactl(['cluster', 'load', '--dir', dir, HOOK_IMAGE])
    assert.equal(code, 0, err.join('\n'))
    assert.ok(out.includes(`loaded docker.io/library/${HOOK_IMAGE}`), out.join('\n'))
    assert.match(await nodeVersionIn('hook-node-version', HOOK_IMAGE), /^v24\.\d+\.\d+$/)
  })
})
