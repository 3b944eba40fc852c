import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import {
  COREDNS_IMAGE,
  COREDNS_VERSION,
  corednsCacheKey,
  defaultCorednsDir,
  packagedCorednsModule,
} from './coredns-image.js'

const moduleDir = packagedCorednsModule()

describe('CoreDNS build cache', () => {
  it('finds the directory build.sh writes to: the same version and cache key', () => {
    const script = readFileSync(join(moduleDir, 'build.sh'), 'utf8')
    assert.ok(script.includes(`COREDNS_VERSION=${COREDNS_VERSION}\n`))
    assert.ok(script.includes('TAG=metactl.local/coredns:$COREDNS_VERSION\n'))
    assert.equal(COREDNS_IMAGE, `metactl.local/coredns:${COREDNS_VERSION}`)
    const key = execFileSync('bash', ['-c', 'cat main.go go.mod go.sum | sha256sum | cut -c1-12'], {
      cwd: moduleDir,
      encoding: 'utf8',
    }).trim()
    assert.equal(corednsCacheKey(), key)
    assert.equal(
      defaultCorednsDir({ XDG_CACHE_HOME: '/c' }),
      `/c/metacontroller-ts/controlplane/coredns-${COREDNS_VERSION}-${key}`
    )
  })

  it('builds the CoreDNS release go.mod pins', () => {
    assert.match(
      readFileSync(join(moduleDir, 'go.mod'), 'utf8'),
      new RegExp(
        `^require github\\.com/coredns/coredns ${COREDNS_VERSION.replace(/\./g, '\\.')}$`,
        'm'
      )
    )
  })
})
