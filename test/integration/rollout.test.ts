// Rolling updates on the real control plane: ControllerRevisions, one child at a time in the
// hook's order, the pause on a failing status check (Warning event and Updated=False
// RolloutWaiting), resumption, the restart toward the newest revision on a spec change, and
// revision creation and pruning; for a namespaced and a cluster-scoped parent. The test plays
// the children's own controller: it reports their Ready condition through the status
// subresource, with observedGeneration, as a real controller would.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ApplyStrategy } from '../../src/engine/children/child-applier.js'
import {
  CONFIGMAPS,
  CONTROLLER_REVISIONS,
  NAMESPACES,
  SERVICES,
} from '../../src/kube/well-known-resources.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, TEST_LABEL, testCrd } from '../support/engine-fixture.js'

const nsParentCrd = testCrd('RollParent')
const clusterParentCrd = testCrd('RollClusterParent', { namespaced: false })
const childCrd = testCrd('RollChild')
const CHILD_NAMES = ['c0', 'c1', 'c2']
/** Every rolling test runs under both of upstream's apply strategies. */
const APPLY_STRATEGIES: readonly ApplyStrategy[] = ['dynamic-apply', 'server-side-apply']

interface HookRequest {
  parent: KubeObject & { spec?: { version?: string } }
}

interface Condition {
  type: string
  status: string
  reason?: string
  message?: string
}

function versionOf(object: KubeObject): string | undefined {
  return (object['data'] as { version?: string } | undefined)?.version
}

function updatedCondition(parent: KubeObject): Condition | undefined {
  const conditions = (parent['status'] as { conditions?: Condition[] } | undefined)?.conditions
  return conditions?.find((c) => c.type === 'Updated')
}

/** One rollout scenario: which parent resource, update method and hook wire it runs with. */
interface Scenario {
  readonly parentCrd: ReturnType<typeof testCrd>
  readonly parentKind: string
  readonly method: 'RollingRecreate' | 'RollingInPlace'
  readonly hookVersion: 'v1' | 'v2'
}

for (const applyStrategy of APPLY_STRATEGIES) describeRollouts(applyStrategy)

function describeRollouts(applyStrategy: ApplyStrategy): void {
  describe(`rolling updates (${applyStrategy})`, () => {
    let fx: EngineFixture
    /** Where the engine keeps the revisions of cluster-scoped parents in this suite. */
    const REVISION_NS = `mc-revisions-${randomBytes(3).toString('hex')}`

    before(async () => {
      fx = await EngineFixture.start({ revisionNamespace: REVISION_NS, applyStrategy })
      await fx.crds(nsParentCrd.crd, clusterParentCrd.crd, childCrd.crd)
      await fx.client.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: REVISION_NS },
      })
      fx.onTeardown(() => fx.client.delete(NAMESPACES, REVISION_NS).catch(() => undefined))
    })

    after(async () => {
      await fx.stop()
    })

    /** Starts a controller and a parent at version 1; returns what the steps need. */
    async function startRollout(scenario: Scenario) {
      const ns = await fx.namespace()
      const namespaced = scenario.parentCrd.ref.namespaced
      const parentName = namespaced ? 'cats' : `cats-${ns}`
      // Versions whose hook call fails (the test's switch for a broken hook).
      const failing = new Set<string>()
      const hook = await fx.hook((body) => {
        const { parent } = body as HookRequest
        const version = parent.spec?.version ?? '0'
        if (failing.has(version)) throw new Error(`hook broken for version ${version}`)
        return {
          // A cluster-scoped parent's children name their namespace; null status on that path
          // proves the Updated condition does not need one (upstream panics there).
          status: namespaced ? { seen: version } : null,
          children: CHILD_NAMES.map((name) => ({
            apiVersion: childCrd.apiVersion,
            kind: 'RollChild',
            metadata: {
              name,
              labels: { app: parentName },
              ...(namespaced ? {} : { namespace: ns }),
            },
            data: { version },
          })),
        }
      })
      await fx.compositeController(`roll-${ns}`, {
        parentResource: {
          apiVersion: scenario.parentCrd.apiVersion,
          resource: scenario.parentCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
        childResources: [
          {
            apiVersion: childCrd.apiVersion,
            resource: childCrd.ref.resource,
            updateStrategy: {
              method: scenario.method,
              statusChecks: { conditions: [{ type: 'Ready', status: 'True' }] },
            },
          },
        ],
        hooks: { sync: { version: scenario.hookVersion, webhook: { url: hook.url } } },
      })
      const parentNs = namespaced ? ns : undefined
      await fx.client.create(scenario.parentCrd.ref, {
        apiVersion: scenario.parentCrd.apiVersion,
        kind: scenario.parentKind,
        metadata: {
          name: parentName,
          ...(parentNs === undefined ? {} : { namespace: parentNs }),
          labels: { [TEST_LABEL]: ns },
        },
        spec: { selector: { matchLabels: { app: parentName } }, version: '1' },
      })
      if (!namespaced) {
        fx.onTeardown(() =>
          fx.client.delete(scenario.parentCrd.ref, parentName).catch(() => undefined)
        )
      }
      return { ns, parentName, parentNs, hook, failing, ref: scenario.parentCrd.ref }
    }

    type Rollout = Awaited<ReturnType<typeof startRollout>>

    const children = async (r: Rollout): Promise<Map<string, KubeObject>> => {
      const list = await fx.client.list(childCrd.ref, { namespace: r.ns })
      return new Map(list.items.map((o) => [o.metadata.name ?? '', o]))
    }

    /** Plays the child's controller: reports Ready for its current generation. */
    const report = async (r: Rollout, name: string, ready: boolean): Promise<void> => {
      await waitFor(
        async () => {
          const current = await fx.client.get(childCrd.ref, name, { namespace: r.ns })
          await fx.client.updateStatus(
            childCrd.ref,
            {
              ...current,
              status: {
                observedGeneration: current.metadata.generation,
                conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
              },
            },
            { namespace: r.ns }
          )
          return true
        },
        { timeoutMs: 10_000, intervalMs: 100, description: `status of ${name}` }
      )
    }

    const waitForCondition = (r: Rollout, check: (c: Condition) => boolean, what: string) =>
      waitFor(
        async () => {
          const parent = await fx.client.get(
            r.ref,
            r.parentName,
            r.parentNs === undefined ? {} : { namespace: r.parentNs }
          )
          const condition = updatedCondition(parent)
          return condition !== undefined && check(condition) ? condition : undefined
        },
        { timeoutMs: 30_000, intervalMs: 200, description: what }
      )

    const waitForVersion = (r: Rollout, name: string, version: string) =>
      fx.waitForObject(childCrd.ref, name, r.ns, (o) => versionOf(o) === version)

    const revisionsOf = async (r: Rollout): Promise<KubeObject[]> => {
      const parent = await fx.client.get(
        r.ref,
        r.parentName,
        r.parentNs === undefined ? {} : { namespace: r.parentNs }
      )
      const list = await fx.client.list(CONTROLLER_REVISIONS, {
        namespace: r.parentNs ?? REVISION_NS,
      })
      return list.items.filter((rev) =>
        rev.metadata.ownerReferences?.some(
          (o) => o.uid === parent.metadata.uid && o.controller === true
        )
      )
    }

    const versions = async (r: Rollout): Promise<string[]> => {
      const now = await children(r)
      return CHILD_NAMES.map((name) => {
        const child = now.get(name)
        return child === undefined ? 'missing' : (versionOf(child) ?? '?')
      })
    }

    const setVersion = (r: Rollout, version: string) =>
      fx.client.patch(
        r.ref,
        r.parentName,
        { spec: { version } },
        { ...(r.parentNs === undefined ? {} : { namespace: r.parentNs }), type: 'merge' }
      )

    /** Waits for the pause on `name`'s failing status check: condition and Warning event. */
    const waitForPause = async (r: Rollout, child: string): Promise<void> => {
      // Messages name children relatively: namespace/name under a cluster-scoped parent.
      const name = r.parentNs === undefined ? `${r.ns}/${child}` : child
      const condition = await waitForCondition(
        r,
        (c) =>
          c.status === 'False' &&
          c.reason === 'RolloutWaiting' &&
          (c.message ?? '').includes(`RollChild ${name} failed status check`),
        `RolloutWaiting on ${name}`
      )
      assert.match(
        condition.message ?? '',
        /"Ready" condition status is "False"|condition type missing/
      )
      // Events go to the parent's namespace (default for a cluster-scoped parent).
      await fx.waitForEvent(
        r.parentNs ?? 'default',
        'RolloutWaiting',
        `RollChild ${name} failed status check`,
        r.parentName
      )
    }

    async function runScenario(scenario: Scenario): Promise<void> {
      const r = await startRollout(scenario)
      for (const name of CHILD_NAMES) await waitForVersion(r, name, '1')
      await waitForCondition(
        r,
        (c) => c.reason === 'OnLatestRevision' && c.status === 'True',
        'OnLatestRevision at v1'
      )
      for (const name of CHILD_NAMES) await report(r, name, true)
      const first = await revisionsOf(r)
      assert.equal(first.length, 1, 'one revision for the first parent state')
      // Revisions name children relatively: namespace/name under a cluster-scoped parent.
      const claimed = CHILD_NAMES.map((n) => (r.parentNs === undefined ? `${r.ns}/${n}` : n))
      assert.deepEqual((first[0]?.['children'] as { names: string[] }[])[0]?.names, claimed)
      const uids = new Map([...(await children(r))].map(([n, o]) => [n, o.metadata.uid]))

      // Spec change: only c0 moves, then the rollout pauses on its status check.
      await setVersion(r, '2')
      await waitForVersion(r, 'c0', '2')
      await report(r, 'c0', false)
      await waitForPause(r, 'c0')
      assert.deepEqual(await versions(r), ['2', '1', '1'], 'one child at a time')
      const c0 = (await children(r)).get('c0')
      if (scenario.method === 'RollingRecreate') assert.notEqual(c0?.metadata.uid, uids.get('c0'))
      else assert.equal(c0?.metadata.uid, uids.get('c0'))
      assert.equal((await revisionsOf(r)).length, 2, 'a new revision next to the old one')
      assert.ok(
        r.hook.requests.some((q) => (q as HookRequest).parent.spec?.version === '1'),
        'the hook was called for the old revision too'
      )

      // Fixed status: the rollout resumes with the next child in hook order, and pauses on it.
      await report(r, 'c0', true)
      await waitForVersion(r, 'c1', '2')
      await report(r, 'c1', false)
      await waitForPause(r, 'c1')
      assert.deepEqual(await versions(r), ['2', '2', '1'])

      // A spec change mid-rollout restarts toward the newest revision from the first child.
      await setVersion(r, '3')
      await waitForVersion(r, 'c0', '3')
      assert.deepEqual(await versions(r), ['3', '2', '1'], 'others stay at their revisions')
      assert.equal((await revisionsOf(r)).length, 3, 'three parent states hold children')

      // Healthy children: the rest follow one by one, in order; old revisions are pruned.
      const reached: string[] = ['c0']
      await waitFor(
        async () => {
          const now = await children(r)
          for (const name of CHILD_NAMES) {
            const child = now.get(name)
            if (child === undefined || versionOf(child) !== '3') continue
            if (!reached.includes(name)) reached.push(name)
            const status = child['status'] as
              { observedGeneration?: number; conditions?: Condition[] } | undefined
            const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
            if (ready !== true || status?.observedGeneration !== child.metadata.generation)
              await report(r, name, true)
          }
          const parent = await fx.client.get(
            r.ref,
            r.parentName,
            r.parentNs === undefined ? {} : { namespace: r.parentNs }
          )
          return updatedCondition(parent)?.reason === 'OnLatestRevision'
        },
        { timeoutMs: 60_000, intervalMs: 200, description: 'rollout to v3' }
      )
      assert.deepEqual(reached, CHILD_NAMES, 'children moved in the order the hook returned them')
      assert.deepEqual(await versions(r), ['3', '3', '3'])
      const last = await waitFor(
        async () => {
          const revisions = await revisionsOf(r)
          return revisions.length === 1 ? revisions : undefined
        },
        { timeoutMs: 10_000, description: 'old revisions pruned' }
      )
      assert.deepEqual(
        [...((last[0]?.['children'] as { names: string[] }[])[0]?.names ?? [])].sort(),
        claimed
      )
      assert.deepEqual(last[0]?.['parentPatch'], {
        spec: { selector: { matchLabels: { app: r.parentName } }, version: '3' },
      })
    }

    it('rolls a namespaced parent’s children one at a time, pausing on a failing status check and restarting on a new spec (RollingRecreate, v1 hook)', async () => {
      await runScenario({
        parentCrd: nsParentCrd,
        parentKind: 'RollParent',
        method: 'RollingRecreate',
        hookVersion: 'v1',
      })
    })

    it('rolls a cluster-scoped parent’s children the same way, its revisions in the configured namespace (RollingInPlace, v2 hook, null status)', async () => {
      await runScenario({
        parentCrd: clusterParentCrd,
        parentKind: 'RollClusterParent',
        method: 'RollingInPlace',
        hookVersion: 'v2',
      })
    })

    it('changes and deletes no child while the hook fails for an old revision mid-rollout, and resumes once it answers', async () => {
      const r = await startRollout({
        parentCrd: nsParentCrd,
        parentKind: 'RollParent',
        method: 'RollingRecreate',
        hookVersion: 'v1',
      })
      for (const name of CHILD_NAMES) await waitForVersion(r, name, '1')
      await waitForCondition(r, (c) => c.reason === 'OnLatestRevision', 'OnLatestRevision at v1')
      await setVersion(r, '2')
      await waitForVersion(r, 'c0', '2')
      await report(r, 'c0', false)
      await waitForPause(r, 'c0')
      const before = await children(r)
      const revisionsBefore = (await revisionsOf(r)).map((rev) => rev.metadata.resourceVersion)

      // The old revision's hook call now fails; a healthy c0 would otherwise move c1.
      r.failing.add('1')
      const calls = r.hook.requests.length
      await report(r, 'c0', true)
      await fx.waitForEvent(r.ns, 'SyncError', 'hook broken for version 1', r.parentName)
      await waitFor(() => r.hook.requests.length > calls, {
        description: 'a sync after the report',
      })
      // Time for any wrong write to land before looking.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const during = await children(r)
      for (const name of CHILD_NAMES) {
        assert.equal(during.get(name)?.metadata.uid, before.get(name)?.metadata.uid, `${name} kept`)
        assert.deepEqual(
          during.get(name)?.['data'],
          before.get(name)?.['data'],
          `${name} unchanged`
        )
      }
      assert.deepEqual(
        (await revisionsOf(r)).map((rev) => rev.metadata.resourceVersion),
        revisionsBefore,
        'no revision written'
      )

      // The hook answers again: the rollout resumes where it paused.
      r.failing.clear()
      await report(r, 'c0', true)
      await waitForVersion(r, 'c1', '2')
    })

    it('finishes a RollingInPlace rollout without status checks next to an InPlace child, one revision left', async () => {
      const ns = await fx.namespace()
      const hook = await fx.hook((body) => {
        const { parent } = body as HookRequest
        const version = parent.spec?.version ?? '0'
        return {
          status: { seen: version },
          children: [
            {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name: 'r' },
              spec: { ports: [{ port: 80 }], selector: { app: 'r' } },
            },
            ...['r-0', 'r-1', 'r-2'].map((name) => ({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name },
              data: { v: version },
            })),
          ],
        }
      })
      await fx.compositeController(`roll-plain-${ns}`, {
        parentResource: {
          apiVersion: nsParentCrd.apiVersion,
          resource: nsParentCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
          revisionHistory: { fieldPaths: ['spec.version'] },
        },
        generateSelector: true,
        childResources: [
          { apiVersion: 'v1', resource: 'services', updateStrategy: { method: 'InPlace' } },
          {
            apiVersion: 'v1',
            resource: 'configmaps',
            updateStrategy: { method: 'RollingInPlace' },
          },
        ],
        hooks: { sync: { webhook: { url: hook.url } } },
      })
      await fx.client.create(nsParentCrd.ref, {
        apiVersion: nsParentCrd.apiVersion,
        kind: 'RollParent',
        metadata: { name: 'r', namespace: ns, labels: { [TEST_LABEL]: ns } },
        spec: { version: '1' },
      })
      const all = ['r-0', 'r-1', 'r-2']
      for (const name of all) {
        await fx.waitForObject(CONFIGMAPS, name, ns, (o) => configValue(o) === '1')
      }
      await fx.waitForObject(SERVICES, 'r', ns, () => true)
      await fx.client.patch(
        nsParentCrd.ref,
        'r',
        { spec: { version: '2' } },
        { namespace: ns, type: 'merge' }
      )
      for (const name of all) {
        await fx.waitForObject(CONFIGMAPS, name, ns, (o) => configValue(o) === '2')
      }
      const condition = await waitFor(
        async () => {
          const parent = await fx.client.get(nsParentCrd.ref, 'r', { namespace: ns })
          const c = updatedCondition(parent)
          return c?.reason === 'OnLatestRevision' && c.status === 'True' ? c : undefined
        },
        { timeoutMs: 30_000, intervalMs: 200, description: 'Updated=True OnLatestRevision at v2' }
      )
      assert.match(condition.message ?? '', /latest ControllerRevision/)
      const parent = await fx.client.get(nsParentCrd.ref, 'r', { namespace: ns })
      await waitFor(
        async () => {
          const list = await fx.client.list(CONTROLLER_REVISIONS, { namespace: ns })
          const owned = list.items.filter((rev) =>
            rev.metadata.ownerReferences?.some((o) => o.uid === parent.metadata.uid)
          )
          return owned.length === 1
        },
        { timeoutMs: 10_000, intervalMs: 200, description: 'the old revision pruned' }
      )
    })
  })
}

function configValue(object: KubeObject): string | undefined {
  return (object['data'] as { v?: string } | undefined)?.v
}
