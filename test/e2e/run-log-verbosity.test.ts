// `metactl run` logs as upstream's zap logger does, and its graded verbosity logs what upstream's
// troubleshooting guide relies on, read back here by parsing every line the process wrote:
// - JSON lines with `level`, `ts` (epoch seconds by default), `caller`, `msg`, in zap's order;
// - `--zap-log-level=7`: V(4) API writes, V(5) merge diffs of updated children, V(6) whole hook
//   requests and responses, V(7) discovery, with a Secret child's values never in any line;
// - `--zap-log-level=info`: none of those; `--zap-stacktrace-level=info` puts a stacktrace on
//   info lines; `--zap-time-encoding=rfc3339` writes `ts` as an RFC 3339 string.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
  testCrd,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const parentCrd = testCrd('LogParent')
const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true }
/** Secret values the hook returns; no log line may hold them, plain or base64. */
const PASSWORDS = ['hunter2-first', 'hunter2-second']

const base64 = (text: string): string => Buffer.from(text).toString('base64')

describe('metactl run logs as zap, with graded verbosity', () => {
  let plane: ControlPlane
  let hook: ServedHook
  const id = Date.now().toString(36)
  const ns = `logs-${id}`
  const engines: SpawnedEngine[] = []

  before(async () => {
    plane = await startControlPlane({ crds: [...METACONTROLLER_CRDS, parentCrd.crd], nodes: 0 })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject & { spec?: { round?: number } } }
      const password = PASSWORDS[parent.spec?.round ?? 0] ?? ''
      return {
        status: { round: parent.spec?.round ?? 0 },
        children: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: parent.metadata.name ?? '' },
            data: { password: base64(password) },
          },
        ],
      }
    })
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: `logs-${id}`, labels: { 'log-test': id } },
      spec: {
        generateSelector: true,
        parentResource: { apiVersion: parentCrd.apiVersion, resource: 'logparents' },
        childResources: [
          { apiVersion: 'v1', resource: 'secrets', updateStrategy: { method: 'InPlace' } },
        ],
        hooks: { sync: { webhook: { url: hook.url } } },
      },
    })
  })

  after(async () => {
    for (const engine of engines) engine.kill()
    await Promise.all(engines.map((e) => e.exited))
    await plane.client.delete(CCS, `logs-${id}`).catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await hook.close()
    await plane.stop()
  })

  const start = (args: readonly string[]): SpawnedEngine => {
    const engine = spawnEngine(plane.kubeconfigPath, [
      `--target-label-selector=log-test=${id}`,
      ...args,
    ])
    engines.push(engine)
    return engine
  }

  it('writes API writes (4), merge diffs (5), hook bodies (6) and discovery (7) at level 7, Secrets redacted', async () => {
    const engine = start(['--zap-log-level=7'])
    await engine.line('serving controllers')
    await plane.client.create(parentCrd.ref, {
      apiVersion: parentCrd.apiVersion,
      kind: 'LogParent',
      metadata: { name: 'p', namespace: ns },
      spec: { round: 0 },
    })
    const secretHolds = (password: string) => async () =>
      (
        (await plane.client.get(SECRETS, 'p', { namespace: ns }).catch(() => undefined)) as
          { data?: Record<string, string> } | undefined
      )?.data?.['password'] === base64(password)
    await waitFor(secretHolds('hunter2-first'), { timeoutMs: 60_000, description: 'the Secret' })
    await plane.client.patch(
      parentCrd.ref,
      'p',
      { spec: { round: 1 } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(secretHolds('hunter2-second'), {
      timeoutMs: 60_000,
      description: 'the Secret updated in place',
    })
    await waitFor(() => engine.lines.some((l) => l['msg'] === 'child diff'), {
      timeoutMs: 10_000,
      description: 'the merge diff line',
    })
    assert.deepEqual(engine.raw, [], 'every line is JSON')
    for (const line of engine.lines) {
      assert.deepEqual(Object.keys(line).slice(0, 2), ['level', 'ts'], JSON.stringify(line))
      assert.equal(typeof line['ts'], 'number', 'epoch seconds by default')
      assert.match(String(line['caller']), /^[\w.-]+\/[\w.-]+\.(ts|js):\d+$/)
      assert.equal(typeof line['msg'], 'string')
    }
    const at = (level: string, msg: string): Record<string, unknown>[] =>
      engine.lines.filter((l) => l['level'] === level && l['msg'] === msg)
    const writes = at('Level(-4)', 'API write')
    assert.ok(
      writes.some(
        (l) => l['verb'] === 'POST' && String(l['path']).endsWith(`/namespaces/${ns}/secrets`)
      ),
      'the Secret create is logged at V(4)'
    )
    assert.ok(writes.every((l) => l['verb'] !== 'GET'))
    const [diff] = at('Level(-5)', 'child diff')
    assert.deepEqual((diff?.['diff'] as { data?: unknown }).data, { password: '<redacted>' })
    const requests = at('Level(-6)', 'hook request')
    const responses = at('Level(-6)', 'hook response')
    assert.ok(requests.length >= 2 && responses.length >= 2)
    assert.equal(
      (requests.at(-1)?.['body'] as { parent: { spec: { round: number } } }).parent.spec.round,
      1,
      'the whole request'
    )
    assert.deepEqual(
      (responses.at(-1)?.['body'] as { children: { data: unknown }[] }).children[0]?.data,
      { password: '<redacted>' }
    )
    assert.ok(at('Level(-7)', 'discovery request').length > 0, 'discovery at V(7)')
    const text = [...engine.lines.map((l) => JSON.stringify(l)), ...engine.raw].join('\n')
    for (const password of PASSWORDS)
      for (const form of [password, base64(password)])
        assert.ok(!text.includes(form), `a Secret value (${form}) reached the log`)
  })

  it('writes none of them at info, and honours the stack-trace level and time encoding', async () => {
    const engine = start([
      '--zap-log-level=info',
      '--zap-stacktrace-level=info',
      '--zap-time-encoding=rfc3339',
    ])
    await engine.line('serving controllers')
    assert.ok(engine.lines.length > 0)
    for (const line of engine.lines) {
      assert.ok(['info', 'warn', 'error'].includes(String(line['level'])), JSON.stringify(line))
      assert.match(String(line['ts']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.match(String(line['stacktrace']), /^at /)
      assert.equal(Object.keys(line).at(-1), 'stacktrace')
    }
  })
})
