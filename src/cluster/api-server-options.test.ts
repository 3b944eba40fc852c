import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { auditLogFlags, featureGateFlags, parseFeatureGates } from './api-server-options.js'

describe('api-server options', () => {
  it('reads feature gates as kube-apiserver writes them, and refuses anything else', () => {
    assert.deepEqual(parseFeatureGates('ShardedListAndWatch=true, Other=false'), {
      ShardedListAndWatch: true,
      Other: false,
    })
    assert.throws(() => parseFeatureGates('ShardedListAndWatch'), /must be Name=true or Name=false/)
    assert.throws(() => parseFeatureGates('A=yes'), /"A=yes"/)
  })

  it('builds one --feature-gates flag, none for no gates', () => {
    assert.deepEqual(featureGateFlags(undefined), [])
    assert.deepEqual(featureGateFlags({ A: true, B: false }), ['--feature-gates=A=true,B=false'])
  })

  it('writes the audit policy next to the flags that use it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'))
    try {
      assert.deepEqual(auditLogFlags(undefined, dir), [])
      const flags = auditLogFlags('/tmp/audit.log', dir)
      assert.ok(flags.includes('--audit-log-path=/tmp/audit.log'))
      const policy = readFileSync(join(dir, 'audit-policy.yaml'), 'utf8')
      assert.match(policy, /level: Metadata/)
    } finally {
      rmSync(dir, { recursive: true })
    }
  })
})
