// Proves `make demo-real` (scripts/demo-real.ts) as a person runs it: the engine image installed by
// its Helm chart serves PodService in-cluster, the Pod's container runs (a containerd:// ID),
// Traefik answers curl on 127.0.0.1 with the Pod's page, an image change gives a new container,
// and a delete removes Pod and container; then the cluster is gone (root, `make node`, helm).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'

const CACHE = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'metacontroller-ts')
const NEEDED = [
  join(CACHE, 'helm/v4.3.2/helm'),
  join(CACHE, 'controlplane/traefik-v3.6.12/traefik'),
  join(CACHE, 'controlplane/image-mirror-1-ggcr-v0.22.1/image-mirror'),
]
// `make e2e` builds them first (make node, examples, helm); the script would otherwise spend the
// Traefik build (an hour on loaded cores) inside the test.
const MISSING = NEEDED.filter((p) => !existsSync(p))
const SKIP =
  MISSING.length === 0 ? false : `not built: ${MISSING.join(', ')}; run make node examples helm`

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-real.ts'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('close', (code) => {
      resolve({ code, stdout, stderr })
    })
  })
}

describe('make demo-real', { skip: SKIP }, () => {
  it('walks a PodService through a real node: container, ingress page, Recreate, delete', async () => {
    const { code, stdout, stderr } = await runDemo()
    assert.equal(code, 0, `${stdout}\n${stderr}`)
    // Every step prints its title and its duration.
    assert.equal(stdout.match(/^==> \d\/7 /gm)?.length, 7, stdout)
    assert.equal(stdout.match(/^ {4}\(\d+\.\d s\)$/gm)?.length, 7, stdout)
    assert.match(stdout, /^ {4}leader: metacontroller-[a-z0-9]+-[a-z0-9]+$/m)
    // The engine image built from the repository's Dockerfile: Node.js 24, not the host's.
    assert.match(stdout, /^ {4}leader runs Node\.js v24\.\d+\.\d+$/m)
    assert.match(
      stdout,
      /^ {4}ENGINE POD\s+STATUS\s+IMAGE\n(?: {4}metacontroller-\S+\s+Running\s+ghcr\.io\/metacontroller-ts\/metacontroller-ts:\S+\n){2}/m
    )

    const ids = [...stdout.matchAll(/containerID (containerd:\/\/[0-9a-f]{64})$/gm)].map(
      (m) => m[1]
    )
    assert.equal(ids.length, 2, stdout)
    assert.notEqual(ids[0], ids[1])
    assert.ok(stdout.includes(`new container: ${ids[0]} -> ${ids[1]}`), stdout)

    const curls = stdout.split("$ curl -i -H 'Host: podservice.local' http://127.0.0.1:").slice(1)
    assert.equal(curls.length, 2, stdout)
    assert.match(curls[0] ?? '', /^\d+\/\n {6}HTTP\/1\.1 200 OK$/m)
    assert.match(curls[0] ?? '', /^ {6}<h1>Hello from web<\/h1>$/m)
    assert.match(curls[1] ?? '', /^ {6}HTTP\/1\.1 200 OK$/m)
    assert.match(curls[1] ?? '', /^ {6}<h1>Hello from web \(web:2\)<\/h1>$/m)

    assert.ok(stdout.includes(`container ${ids[1]} gone from containerd`), stdout)
    assert.match(stdout, /^Walkthrough done in \d+\.\d s\.$/m)
    assert.match(
      stdout,
      /^Cluster stopped in \d+\.\d s \(\d+ processes, \d+ left-over container processes killed\)\.$/m
    )
  })
})
