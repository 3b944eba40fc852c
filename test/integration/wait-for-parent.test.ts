// waitForParent, on timeout, says why: the parent's status and the engine's last SyncError event
// about it, read from the real API server (events found by field selector).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CONFIGMAPS, EVENTS, NAMESPACES } from 'metacontroller-ts/kube'
import { startControlPlane, waitForParent, WaitTimeoutError } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import type { KubeObject } from 'metacontroller-ts'

describe('waitForParent', { timeout: 120_000 }, () => {
  let plane: ControlPlane
  const namespace = `wait-${Date.now().toString(36)}`

  before(async () => {
    plane = await startControlPlane({ nodes: 0 })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  const event = (name: string, message: string, time: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', namespace },
    reason: 'SyncError',
    type: 'Warning',
    message,
    lastTimestamp: time,
    firstTimestamp: time,
  })

  it('returns what the condition returns once it holds', async () => {
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ready', namespace },
      data: { ready: 'yes' },
    })
    const data = await waitForParent(
      plane.client,
      { resource: CONFIGMAPS, name: 'ready', namespace },
      (object) => object['data'] as Record<string, string>
    )
    assert.deepEqual(data, { ready: 'yes' })
  })

  it('on timeout, prints the parent status and its last SyncError event', async () => {
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'parent', namespace },
    })
    await plane.client.create(EVENTS, event('older', 'first failure', '2026-01-01T00:00:00Z'))
    await plane.client.create(
      EVENTS,
      event(
        'newer',
        'desired child ConfigMap kube-system/x is in namespace kube-system',
        '2026-01-01T00:01:00Z'
      )
    )
    await assert.rejects(
      waitForParent(
        plane.client,
        { resource: CONFIGMAPS, name: 'parent', namespace },
        () => false,
        {
          timeoutMs: 300,
          description: 'the parent to be ready',
        }
      ),
      (error: unknown) =>
        error instanceof WaitTimeoutError &&
        error.message ===
          'timed out after 300 ms waiting for the parent to be ready; status null; last SyncError ' +
            'at 2026-01-01T00:01:00Z: desired child ConfigMap kube-system/x is in namespace kube-system'
    )
  })
})
