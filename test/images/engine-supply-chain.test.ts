// The engine image's supply chain (docs/deploy.md, "Supply chain"): built twice from the same
// commit with the builder (tools/images/build.sh, SOURCE_DATE_EPOCH set to the commit's time,
// every layer rebuilt), it has the same image digest and the same layers; and it carries a
// CycloneDX SBOM at /app/sbom.cdx.json whose npm components are exactly the packages in the
// image's node_modules and which names the Node.js runtime the image runs. Needs root and apt
// (buildah, debootstrap); `make images` runs it.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { imagesScript, runImagesScript } from '../../src/cluster/images/image-builder.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const OUT = join(REPO, '.tmp', 'images')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
const IMAGE = 'metacontroller-ts-reproducible'

/** The image's entry of a docker-archive's manifest.json: its config (named by digest), layers. */
interface ArchiveEntry {
  readonly Config: string
  readonly Layers: readonly string[]
}

function archiveEntry(archive: string): ArchiveEntry {
  const manifest = execFileSync('tar', ['-xOf', archive, 'manifest.json'], { encoding: 'utf8' })
  const [entry] = JSON.parse(manifest) as ArchiveEntry[]
  assert.ok(entry, `${archive} lists no image`)
  return entry
}

/** Builds the repository's Dockerfile reproducibly, no cached layer reused; returns the archive. */
function buildReproducibly(tag: string, epoch: string): string {
  const output = join(OUT, `engine-reproducible-${tag}.tar`)
  execFileSync('bash', [imagesScript('build.sh'), '-t', `${IMAGE}:${tag}`, '-o', output, REPO], {
    env: { ...process.env, SOURCE_DATE_EPOCH: epoch, IMAGES_NO_CACHE: '1' },
    // buildah's step log only in the error, should the build fail.
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  })
  return output
}

// Runs `script` with sh in a container of `image` (the builder's store); resolves with its output.
async function runInImage(image: string, script: string): Promise<string> {
  const buildah = imagesScript('buildah.sh')
  const container = await runImagesScript(buildah, ['from', '--pull-never', image])
  try {
    return execFileSync(
      'bash',
      [buildah, 'run', '--isolation', 'chroot', container, '--', 'sh', '-c', script],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }
    )
  } finally {
    await runImagesScript(buildah, ['rm', container])
  }
}

// Prints `name@version` of every package directory under /app/node_modules, nested ones included.
const LIST_PACKAGES = `node -e '
const fs = require("fs"), path = require("path");
const walk = (dir) => {
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    if (name.startsWith("@")) { walk(path.join(dir, name)); continue; }
    const pkg = path.join(dir, name, "package.json");
    if (!fs.existsSync(pkg)) continue;
    const { name: n, version } = JSON.parse(fs.readFileSync(pkg, "utf8"));
    console.log(n + "@" + version);
    walk(path.join(dir, name, "node_modules"));
  }
};
walk("/app/node_modules");'`

interface Component {
  readonly type: string
  readonly name: string
  readonly group?: string
  readonly version: string
  readonly purl?: string
  readonly cpe?: string
}

describe('the engine image’s supply chain', { timeout: 30 * 60_000 }, () => {
  let first = ''
  let second = ''

  before(() => {
    const epoch = execFileSync('git', ['log', '-1', '--format=%ct'], {
      cwd: REPO,
      encoding: 'utf8',
    }).trim()
    assert.match(epoch, /^\d+$/)
    first = buildReproducibly('1', epoch)
    second = buildReproducibly('2', epoch)
  })

  it('builds the same digest and layers twice from one commit', () => {
    const [a, b] = [archiveEntry(first), archiveEntry(second)]
    assert.match(a.Config, /^[0-9a-f]{64}\.json$/)
    assert.deepEqual(b.Layers, a.Layers)
    assert.equal(b.Config, a.Config, 'the image digests (config digests) differ')
  })

  it('carries a CycloneDX SBOM of its node_modules and its Node.js runtime', async () => {
    const image = `${IMAGE}:1`
    const bom = JSON.parse(await runInImage(image, 'cat /app/sbom.cdx.json')) as {
      bomFormat: string
      specVersion: string
      serialNumber?: string
      metadata: { timestamp?: string; component: Component; tools: unknown }
      components: Component[]
    }
    assert.equal(bom.bomFormat, 'CycloneDX')
    assert.equal(bom.specVersion, '1.6')
    assert.equal(bom.metadata.component.name, 'metacontroller-ts')
    assert.equal(bom.metadata.component.version, VERSION)
    assert.match(JSON.stringify(bom.metadata.tools), /cyclonedx-npm/)
    // Nothing of the clock or chance, which would break the reproducible digest.
    assert.equal(bom.metadata.timestamp, undefined)
    assert.equal(bom.serialNumber, undefined)

    const installed = (await runInImage(image, LIST_PACKAGES)).trim().split('\n').sort()
    assert.ok(installed.length >= 10, installed.join(' '))
    const npm = bom.components.filter((c) => c.purl?.startsWith('pkg:npm/') === true)
    const listed = npm.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`)
    assert.deepEqual([...new Set(listed)].sort(), [...new Set(installed)].sort())

    const nodeVersion = (await runInImage(image, 'node --version')).trim().replace(/^v/, '')
    const runtime = bom.components.filter((c) => c.name === 'node' && c.type === 'platform')
    assert.deepEqual(
      runtime.map((c) => [c.version, c.cpe]),
      [[nodeVersion, `cpe:2.3:a:nodejs:node.js:${nodeVersion}:*:*:*:*:*:*:*`]]
    )
  })
})
