import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CompositeSyncRequest } from '../../api/hook-model.js'
import type { KubeObject } from '../../core/kube-object.js'
import { describeHookError } from './hook-error.js'
import { SyncReporter, describeSync } from './sync-report.js'

const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
})
const request: CompositeSyncRequest = {
  controller: {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: {},
  },
  parent: {
    apiVersion: 'example.com/v1',
    kind: 'Greeting',
    metadata: { name: 'hi', namespace: 'ns' },
  },
  children: new Map([
    [
      'ConfigMap.v1',
      new Map([
        ['ns/a', cm('a')],
        ['ns/b', cm('b')],
      ]),
    ],
  ]),
  related: new Map(),
  finalizing: false,
}
const response = {
  status: { ready: true },
  children: [cm('b'), cm('c')],
  resyncAfterMs: 0,
  finalized: false,
}

describe('metactl dev output', () => {
  it('describes a sync as new, gone and kept children and the status', () => {
    assert.equal(
      describeSync(request, response),
      'sync Greeting ns/hi: +ConfigMap c, -ConfigMap a, =1 kept; status {"ready":true}'
    )
  })

  it('prints a repeated result once per parent, and again after reset', () => {
    const lines: string[] = []
    const reporter = new SyncReporter(
      (line) => lines.push(line),
      () => new Date('2026-01-01T10:00:00Z')
    )
    reporter.synced(request, response)
    reporter.synced(request, response)
    assert.equal(lines.length, 1)
    assert.match(lines[0] ?? '', /^10:00:00 sync Greeting ns\/hi: /)
    reporter.reset()
    reporter.synced(request, response)
    assert.equal(lines.length, 2)
  })

  it('keeps only the stack frames in the project, relative to it', () => {
    const error = new TypeError("Cannot read properties of undefined (reading 'x')")
    error.stack = [
      `TypeError: ${error.message}`,
      '    at sync (file:///work/proj/src/hook.ts?tsx-namespace=metactl-dev-2:15:46)',
      '    at adapt (file:///work/proj/node_modules/metacontroller-ts/dist/sdk/in-process.js:30:5)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at /work/proj/src/util.ts:3:1',
    ].join('\n')
    assert.deepEqual(describeHookError(error, '/work/proj'), [
      "TypeError: Cannot read properties of undefined (reading 'x')",
      '    at src/hook.ts:15:46 (sync)',
      '    at src/util.ts:3:1',
    ])
  })
})
