import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ForbiddenError, NotFoundError } from '../../kube/api-error.js'
import { InvalidDesiredChildError } from '../../api/desired-children.js'
import type { KubeObject } from '../../core/kube-object.js'
import type { RecordedWrite, SyncPlan, SyncReport } from '../../engine/index.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import { devLogger, shortEngineLine } from './dev-logger.js'
import { describeHookError } from './hook-error.js'
import { SyncReporter, describeSyncReport, writeErrorMessage } from './sync-report.js'

const MAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true }
const PARENTS = { group: 'example.com', version: 'v1', resource: 'greetings', namespaced: true }
const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
})
const parent: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Greeting',
  metadata: { name: 'hi', namespace: 'ns' },
}
const write = (method: RecordedWrite['method'], object: KubeObject, ref = MAPS): RecordedWrite => ({
  method,
  ref,
  namespace: object.metadata.namespace,
  name: object.metadata.name ?? '',
  ...(method === 'delete' ? {} : { sent: object, result: object }),
})
/** A plan of `steps` (each a write the engine planned) that keeps `unchanged` as they are. */
const plan = (
  steps: readonly { op: 'create' | 'update' | 'delete'; object: KubeObject }[],
  unchanged: readonly KubeObject[] = []
): SyncPlan => {
  const entry = (object: KubeObject) => ({
    type: 'ConfigMap.v1',
    key: `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`,
    object,
  })
  return {
    desired: new Map(),
    children: {
      steps: steps.map(({ op, object }) => ({
        op,
        ...entry(object),
        ...(op === 'update' ? { method: 'InPlace', observed: object } : {}),
      })),
      unchanged: unchanged.map((object) => ({ op: 'unchanged', ...entry(object) })),
      skipped: [],
      delete: [],
      create: [],
      update: [],
      recreate: [],
      failed: [],
    },
  } as unknown as SyncPlan
}
const report = (overrides: Partial<SyncReport>): SyncReport => ({
  controller: { kind: 'CompositeController', name: 'greeter' },
  parent,
  parentRef: PARENTS,
  types: new Map([['ConfigMap.v1', { ref: MAPS, updateMethod: 'InPlace' as const }]]),
  applyFrom: 0,
  hook: 'sync',
  plan: undefined,
  writes: [],
  error: undefined,
  durationMs: 3,
  ...overrides,
})

describe('metactl dev sync lines', () => {
  it('counts and names what the sync created, updated, deleted and left unchanged', () => {
    const lines = describeSyncReport(
      report({
        plan: plan(
          [
            { op: 'delete', object: cm('old') },
            { op: 'create', object: cm('a') },
            { op: 'update', object: cm('b') },
          ],
          [cm('c')]
        ),
        writes: [
          write('delete', cm('old')),
          write('create', cm('a')),
          write('update', cm('b')),
          write('updateStatus', parent, PARENTS),
        ],
      }),
      '/p'
    )
    assert.deepEqual(lines, [
      '[greeter] sync Greeting ns/hi: created 1 (ConfigMap a), updated 1 (ConfigMap b), ' +
        'deleted 1 (ConfigMap old), unchanged 1 (ConfigMap c); status written',
    ])
  })

  it('says when a decorator updated its target and names children of other namespaces', () => {
    const other: KubeObject = { ...cm('x'), metadata: { name: 'x', namespace: 'other' } }
    const lines = describeSyncReport(
      report({
        controller: { kind: 'DecoratorController', name: 'labeler' },
        plan: plan([{ op: 'create', object: other }]),
        writes: [write('update', parent, PARENTS), write('create', other)],
      }),
      '/p'
    )
    assert.deepEqual(lines, [
      '[labeler] sync Greeting ns/hi: created 1 (ConfigMap other/x), updated 0, deleted 0, ' +
        'unchanged 0; target updated; status unchanged',
    ])
  })

  it('prints what was written before a write the server refused, and the sync error', () => {
    const refused: RecordedWrite = {
      ...write('create', cm('b')),
      error: new Error('quota exceeded'),
    }
    const lines = describeSyncReport(
      report({
        plan: plan([
          { op: 'create', object: cm('a') },
          { op: 'create', object: cm('b') },
        ]),
        writes: [write('create', cm('a')), refused],
        error: new Error('quota exceeded'),
      }),
      '/p'
    )
    assert.deepEqual(lines, [
      '[greeter] sync Greeting ns/hi failed (wrote created 1 (ConfigMap a), updated 0, deleted 0, ' +
        'unchanged 0; status unchanged): Error: quota exceeded',
    ])
  })

  it('says when no planned child write was made, and why the server refused them', () => {
    const lost: RecordedWrite = { ...write('create', cm('a')), error: new Error('already exists') }
    const lines = describeSyncReport(
      report({ plan: plan([{ op: 'create', object: cm('a') }]), writes: [lost] }),
      '/p'
    )
    assert.deepEqual(lines, [
      '[greeter] sync Greeting ns/hi: nothing written to the children, ' +
        'refused 1 (create configmaps ns/a: already exists); status unchanged',
    ])
  })

  it('prints a rejected answer with its reason and that nothing was written', () => {
    const error = new InvalidDesiredChildError('ConfigMap kube-system/a: not in ns')
    assert.deepEqual(describeSyncReport(report({ error }), '/p'), [
      '[greeter] sync Greeting ns/hi: answer rejected, nothing written: ConfigMap kube-system/a: not in ns',
    ])
  })

  it("prints a hook's exception with its project frames, and a cache wait as a wait", () => {
    const error = new TypeError('boom')
    error.stack = 'TypeError: boom\n    at sync (/p/src/hook.ts:3:9)'
    assert.deepEqual(describeSyncReport(report({ error }), '/p'), [
      '[greeter] sync Greeting ns/hi failed: TypeError: boom',
      '    at src/hook.ts:3:9 (sync)',
    ])
    const wait = describeSyncReport(report({ error: new NotSyncedError('no cache') }), '/p')
    assert.deepEqual(wait, ['[greeter] sync Greeting ns/hi waits: no cache'])
  })

  it('reports a finalize whose parent went once its finalizer was removed as finalized', () => {
    const gone = new NotFoundError('greetings.example.com "hi" not found', {
      statusCode: 404,
      reason: 'NotFound',
      request: { method: 'PUT', path: '/status' },
    })
    const writes: RecordedWrite[] = [
      write('update', parent, PARENTS),
      { ...write('updateStatus', parent, PARENTS), error: gone },
    ]
    const lines = describeSyncReport(report({ hook: 'finalize', plan: plan([]), writes }), '/p')
    assert.deepEqual(lines, [
      '[greeter] finalize Greeting ns/hi: finalized; finalizer removed, the parent is gone',
    ])
    // The same 404 on a sync (no finalizer removed by a finalize) stays a refusal.
    const sync = describeSyncReport(report({ plan: plan([]), writes: writes.slice(1) }), '/p')
    assert.doesNotMatch(sync?.[0] ?? '', /finalized/)
  })

  it('names the right the engine lacks when a RoleBinding child is refused as an escalation', () => {
    const refused = new ForbiddenError(
      'rolebindings.rbac.authorization.k8s.io "edit" is forbidden: user "x" is attempting to ' +
        'grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"]}',
      { statusCode: 403, reason: 'Forbidden', request: { method: 'POST', path: '/rolebindings' } }
    )
    assert.match(
      writeErrorMessage(refused),
      /not currently held: \(.*grant it the verb bind on the Role or ClusterRole/
    )
    assert.doesNotMatch(writeErrorMessage(refused), /APIGroups/)
  })

  it('prints nothing for a sync that asked no hook and wrote nothing', () => {
    assert.equal(describeSyncReport(report({ hook: undefined }), '/p'), undefined)
  })
})

describe('metactl dev reporter', () => {
  const setup = () => {
    const lines: string[] = []
    const timers: (() => void)[] = []
    const reporter = new SyncReporter((line) => lines.push(line), {
      now: () => new Date('2026-01-01T10:00:00Z'),
      schedule: (flush) => {
        timers.push(flush)
        return () => {
          timers.splice(timers.indexOf(flush), 1)
        }
      },
    })
    return { lines, timers, reporter }
  }

  it('collapses a repeated line into one line with its count once time passes', () => {
    const { lines, timers, reporter } = setup()
    for (let i = 0; i < 3; i++) reporter.print('p', ['sync P a: rejected'])
    assert.deepEqual(lines, ['10:00:00 sync P a: rejected'])
    assert.equal(timers.length, 1)
    timers[0]?.()
    assert.deepEqual(lines, ['10:00:00 sync P a: rejected', '10:00:00 sync P a: rejected (x3)'])
  })

  it('prints the count before the next different line of any subject, so none is reordered', () => {
    const { lines, timers, reporter } = setup()
    reporter.print('p', ['one', '  frame'])
    reporter.print('p', ['one', '  frame'])
    reporter.print('q', ['other parent'])
    reporter.print('p', ['two'])
    assert.deepEqual(lines, [
      '10:00:00 one',
      '           frame',
      '10:00:00 one (x2)',
      '10:00:00 other parent',
      '10:00:00 two',
    ])
    assert.equal(timers.length, 0)
  })

  it('never folds a reload line into a repeat printed after the sync it caused', () => {
    const { lines, timers, reporter } = setup()
    const reload = 'reloaded the manifests (deploy/cc.yaml changed): nothing changed'
    reporter.announce([reload])
    reporter.print('p', ['sync P'])
    reporter.announce([reload])
    reporter.print('p', ['sync P'])
    for (const timer of [...timers]) timer()
    assert.deepEqual(
      lines.map((line) => line.slice(9)),
      [reload, 'sync P', reload, 'sync P']
    )
  })
})

describe('metactl dev engine log', () => {
  it('shortens warnings and leaves sync failures to the sync lines', () => {
    assert.equal(
      shortEngineLine(
        '{"level":"warn","ts":1,"msg":"watch failed; retrying","resource":"x","retryInMs":5}'
      ),
      'engine warn: watch failed; retrying (resource: x)'
    )
    assert.equal(shortEngineLine('{"level":"warn","msg":"sync failed","error":"x"}'), undefined)
  })

  it('prints every engine line (info and up) on stderr with --verbose, only short warnings without', () => {
    const out: string[] = []
    const err: string[] = []
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }
    const reporter = new SyncReporter(io.out)
    for (const verbose of [true, false]) {
      const log = devLogger(verbose, io, reporter)
      log.info('children changed', { created: ['a'] })
      log.warn('sync failed', { error: 'bad answer' })
      log.warn('watch failed; retrying', { resource: 'configmaps' })
    }
    assert.equal(err.length, 3)
    assert.match(err[0] ?? '', /\tINFO\t.*\tchildren changed\t\{"created":\["a"\]\}/)
    assert.match(err[1] ?? '', /\tWARN\t.*\tsync failed/)
    assert.deepEqual(
      out.map((l) => l.slice(9)),
      ['engine warn: watch failed; retrying (resource: configmaps)']
    )
  })
})

describe('metactl dev hook errors', () => {
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

  it('shows the source lines of the frame that threw, with a caret under its column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-hook-error-'))
    try {
      const source = [
        'export const sync = (req) => {',
        '  const n = 1',
        '  return req.parent.spec.x',
        '}',
      ].join('\n')
      writeFileSync(join(dir, 'hook.ts'), source)
      const error = new TypeError("Cannot read properties of undefined (reading 'x')")
      error.stack = `TypeError: ${error.message}\n    at sync (file://${dir}/hook.ts?tsx-namespace=2:3:26)`
      assert.deepEqual(describeHookError(error, dir), [
        "TypeError: Cannot read properties of undefined (reading 'x')",
        '    at hook.ts:3:26 (sync)',
        '      1 | export const sync = (req) => {',
        '      2 |   const n = 1',
        '    > 3 |   return req.parent.spec.x',
        '        |                          ^',
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
