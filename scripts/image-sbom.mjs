#!/usr/bin/env node
// Writes the engine image's SBOM (CycloneDX 1.6 JSON) during the image build (Dockerfile, build
// stage): the production package tree of package-lock.json, the one the runtime stage installs
// with `npm ci --omit=dev`, from the CycloneDX project's npm generator (a pinned devDependency),
// plus the Node.js runtime the image runs, which that generator does not list. No clock and no
// random value go in (`--output-reproducible`), so the image stays reproducible.
//
//   node scripts/image-sbom.mjs OUT.json
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const out = process.argv[2]
if (!out) {
  console.error('usage: node scripts/image-sbom.mjs OUT.json')
  process.exit(2)
}

execFileSync(
  'node_modules/.bin/cyclonedx-npm',
  [
    '--omit',
    'dev',
    '--flatten-components',
    '--output-reproducible',
    '--spec-version',
    '1.6',
    '--output-format',
    'JSON',
    '--output-file',
    out,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] }
)

const bom = JSON.parse(readFileSync(out, 'utf8'))
const version = process.versions.node
const ref = `runtime|node@${version}`
// The CPE is what vulnerability databases file Node.js advisories under.
bom.components.push({
  type: 'platform',
  name: 'node',
  version,
  'bom-ref': ref,
  description: 'The Node.js runtime of the image (its base image node:<major>-bookworm-slim)',
  licenses: [{ license: { id: 'MIT' } }],
  cpe: `cpe:2.3:a:nodejs:node.js:${version}:*:*:*:*:*:*:*`,
  purl: `pkg:generic/node@${version}`,
})
const root = bom.dependencies.find((d) => d.ref === bom.metadata.component['bom-ref'])
if (root) root.dependsOn = [...(root.dependsOn ?? []), ref].sort()
bom.dependencies.push({ ref, dependsOn: [] })
writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`)
