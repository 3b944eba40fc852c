// The hook images upstream's examples name, built by tools/images/example-hook-images.sh with the
// builder here (no Docker), each run in the builder with the example's own hook code: the server
// answers the hook as the example's Deployment would call it. Every run is in a network namespace
// of its own (`unshare --net`, loopback only), since the servers listen on every address. Needs
// root and the builder of `make images`, which runs it.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { imagesScript, runImagesScript } from '../../src/cluster/images/image-builder.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const FIXTURES = join(REPO, 'test', 'fixtures', 'upstream-examples')

const progress = (line: string): void => {
  if (line.startsWith('images: [') || line.startsWith('images: example hook')) {
    console.log(`  ${line}`)
  }
}

/**
 * Runs `script` with sh in a container of `image`, in a new network namespace with loopback up;
 * `hooks` (a host directory) is mounted read-only at `mountPath`. Resolves with the output.
 */
async function runIsolated(
  image: string,
  script: string,
  mount?: { hooks: string; mountPath: string }
): Promise<string> {
  const buildah = imagesScript('buildah.sh')
  const container = await runImagesScript(buildah, ['from', '--pull-never', image])
  try {
    const volume = mount === undefined ? [] : ['-v', `${mount.hooks}:${mount.mountPath}:ro`]
    const run = [buildah, 'run', '--isolation', 'chroot', ...volume, container, '--']
    const quoted = [...run, 'sh', '-c', script].map((a) => `'${a.replaceAll("'", `'\\''`)}'`)
    return execFileSync(
      'unshare',
      ['--net', 'sh', '-c', `ip link set lo up 2>/dev/null || true; bash ${quoted.join(' ')}`],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 }
    ).trim()
  } finally {
    await runImagesScript(buildah, ['rm', container])
  }
}

/** A shell line POSTing `body` to 127.0.0.1:`port`/`path` with bash's /dev/tcp; prints the answer. */
function postWithBash(port: number, path: string, body: string): string {
  const request =
    `POST /${path} HTTP/1.0\\r\\nContent-Type: application/json\\r\\n` +
    `Content-Length: ${String(body.length)}\\r\\n\\r\\n${body}`
  return `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${String(port)}; printf "%b" "${request.replaceAll('"', '\\"')}" >&3; cat <&3'`
}

describe("the hook images upstream's examples name", { timeout: 20 * 60_000 }, () => {
  let archives = ''

  before(async () => {
    archives = await runImagesScript(
      join(REPO, 'tools', 'images', 'example-hook-images.sh'),
      [],
      progress
    )
  })

  it('writes one archive per image, cached under a key', () => {
    for (const name of ['nodejs-server', 'jsonnetd', 'python-3.11', 'python-3.11-slim']) {
      assert.ok(existsSync(join(archives, `${name}.tar`)), `${name}.tar in ${archives}`)
    }
    assert.match(archives, /example-hooks-[0-9a-f]{12}$/)
  })

  it("each image starts its server as upstream's does: entrypoint and working directory", () => {
    const config = (image: string): string => {
      const inspected = JSON.parse(
        execFileSync('bash', [imagesScript('buildah.sh'), 'inspect', '--type', 'image', image], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      ) as { OCIv1: { config: { Entrypoint?: string[]; WorkingDir?: string } } }
      const { Entrypoint, WorkingDir } = inspected.OCIv1.config
      return `${JSON.stringify(Entrypoint)} ${WorkingDir ?? ''}`
    }
    assert.equal(config('metacontroller/nodejs-server:0.1'), '["node","/node/server.js"] /node')
    // The examples set workingDir: /hooks on the container; their Services target port 8080.
    assert.equal(
      config('metacontroller/jsonnetd:0.1'),
      '["/usr/local/bin/jsonnetd","-addr",":8080"] '
    )
  })

  it("nodejs-server:0.1 serves catset's sync.js from /node/hooks on port 80", async () => {
    const parent = {
      metadata: { name: 'nginx', namespace: 'default', uid: 'u1' },
      spec: {
        replicas: 1,
        serviceName: 'nginx',
        template: { metadata: { labels: { app: 'nginx' } }, spec: { containers: [] } },
      },
    }
    const request = JSON.stringify({ parent, children: { 'Pod.v1': {} } })
    const output = await runIsolated(
      'metacontroller/nodejs-server:0.1',
      `(node /node/server.js >/tmp/server.log 2>&1 &); sleep 2; ` +
        `node -e 'fetch("http://127.0.0.1/sync",{method:"POST",headers:{"content-type":"application/json"},body:process.argv[1]}).then(async(r)=>console.log(r.status, await r.text()))' '${request}'`,
      { hooks: join(FIXTURES, 'catset', 'manifest'), mountPath: '/node/hooks' }
    )
    assert.match(output, /^200 /)
    const answer = JSON.parse(output.slice(4)) as { children: { metadata: { name: string } }[] }
    assert.deepEqual(
      answer.children.map((c) => c.metadata.name),
      ['nginx-0']
    )
  })

  it("jsonnetd:0.1 serves service-per-pod's Jsonnet hooks from its working directory on port 8080", async () => {
    const output = await runIsolated(
      'metacontroller/jsonnetd:0.1',
      `cd /hooks && (/usr/local/bin/jsonnetd -addr :8080 >/tmp/jsonnetd.log 2>&1 &); sleep 2; ` +
        postWithBash(8080, 'finalize-service-per-pod', '{"attachments":{"Service.v1":{}}}'),
      { hooks: join(FIXTURES, 'service-per-pod', 'manifest'), mountPath: '/hooks' }
    )
    assert.match(output, /^HTTP\/1\.0 200/)
    const body = output.slice(output.indexOf('\r\n\r\n') + 4)
    assert.deepEqual(JSON.parse(body), { attachments: [], finalized: true })
  })

  it('python:3.11 and python:3.11-slim run Python 3.11 with the modules the hooks import', async () => {
    for (const image of ['python:3.11', 'python:3.11-slim']) {
      const output = await runIsolated(
        image,
        'python --version; python -c "import http.server, json, ssl, copy, sys; print(ssl.OPENSSL_VERSION)"'
      )
      assert.match(output, /^Python 3\.11\.\d+\nOpenSSL 3\./)
    }
  })
})
