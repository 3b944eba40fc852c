// The Dockerfiles users build, built unchanged without Docker (tools/images/build.sh: buildah,
// chroot isolation, base images assembled from Debian packages and the official Node.js binary),
// and each image run in the builder: the repository's engine Dockerfile, the Dockerfile
// `metactl init` writes into every project, and the PodService example's. Needs root and apt
// (buildah, debootstrap); `make images` runs it. The archives go to .tmp/images/ for the real-node
// load test (real-node-load.test.ts).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  buildImage,
  imagesScript,
  runImagesScript,
} from '../../src/cluster/images/image-builder.js'
import { main } from '../../src/cli/main.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const OUT = join(REPO, '.tmp', 'images')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
/** The engine image's name, as docs/deploy.md builds it. */
const ENGINE_IMAGE = `ghcr.io/metacontroller-ts/metacontroller-ts:${VERSION}`

const progress = (line: string): void => {
  if (line.startsWith('images: ')) console.log(`  ${line}`)
}

// Runs `script` with sh in a container of `image` (the builder's store); resolves with its output.
async function runInImage(image: string, script: string): Promise<string> {
  const buildah = imagesScript('buildah.sh')
  const container = await runImagesScript(buildah, ['from', '--pull-never', image])
  try {
    const output = execFileSync(
      'bash',
      [buildah, 'run', '--isolation', 'chroot', container, '--', 'sh', '-c', script],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }
    )
    return output.trim()
  } finally {
    await runImagesScript(buildah, ['rm', container])
  }
}

describe('Dockerfiles built without Docker', { timeout: 30 * 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-dockerfiles-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('has the base images under their Docker Hub names, each with its runtime', async () => {
    await runImagesScript(imagesScript('base-images.sh'), [], progress)
    const node = await runInImage(
      'node:24-bookworm-slim',
      'node --version; npm --version; id -u node'
    )
    assert.match(node, /^v24\.\d+\.\d+\n\d+\.\d+\.\d+\n1000$/)
    for (const python of ['python:3.11', 'python:3.11-slim']) {
      assert.match(await runInImage(python, 'python --version'), /^Python 3\.11\.\d+$/)
    }
    assert.match(await runInImage('debian:bookworm-slim', 'cat /etc/debian_version'), /^12\.\d+$/)
  })

  it("builds the repository's Dockerfile into an engine image that runs Node 24 and metactl", async () => {
    const archive = await buildImage({
      context: REPO,
      tag: ENGINE_IMAGE,
      output: join(OUT, 'engine-dockerfile.tar'),
      onProgress: progress,
    })
    assert.ok(statSync(archive).size > 0)
    const lines = (
      await runInImage(
        ENGINE_IMAGE,
        'node --version; id -u; readlink /usr/bin/metacontroller; cd /app && node bin/metactl.js --version'
      )
    ).split('\n')
    assert.match(lines[0] ?? '', /^v24\.\d+\.\d+$/)
    assert.deepEqual(lines.slice(1), ['1000', '/app/bin/metacontroller.js', VERSION])
  })

  it('builds the Dockerfile of a `metactl init` project into a hook image that serves', async () => {
    const project = join(work, 'hello-controller')
    const io = {
      out: () => undefined,
      err: (line: string) => {
        console.log(line)
      },
    }
    assert.equal(await main(['node', 'metactl', 'init', project], io), 0)
    // The Dockerfile runs `npm ci`, which needs the lock file `npm install` writes.
    execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit'], {
      cwd: project,
      stdio: 'ignore',
    })
    await buildImage({
      context: project,
      tag: 'hello-controller-hook:dev',
      output: join(OUT, 'hello-controller-hook.tar'),
      onProgress: progress,
    })
    const output = await runInImage(
      'hello-controller-hook:dev',
      'node --version; cd /app && (node dist/server.js >/dev/null 2>&1 &) && sleep 3 && ' +
        `node -e 'fetch("http://127.0.0.1:8080/healthz").then((r) => console.log(r.status))'`
    )
    assert.match(output, /^v24\.\d+\.\d+\n200$/)
  })

  it("builds the PodService example's Dockerfile from the repository root", async () => {
    await buildImage({
      context: REPO,
      dockerfile: join(REPO, 'examples', 'podservice', 'Dockerfile'),
      tag: 'podservice-hook:dev',
      output: join(OUT, 'podservice-hook-dockerfile.tar'),
      onProgress: progress,
    })
    const output = await runInImage(
      'podservice-hook:dev',
      'node --version; test -f /app/examples/podservice/server.js && echo server'
    )
    assert.match(output, /^v24\.\d+\.\d+\nserver$/)
    assert.ok(existsSync(join(OUT, 'podservice-hook-dockerfile.tar')))
  })
})
