// Unit tests of the NetworkPolicy decorator's hook, no cluster: every request goes through
// callDecoratorHook, which validates the answer exactly as the engine does. Also checks that
// decorator.yaml and the in-process definition agree.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { callDecoratorHook } from 'metacontroller-ts'
import { readManifestFile } from 'metacontroller-ts/testing'
import { NAME_LABEL, desiredPod, settingsOf } from '../podservice/hook.js'
import type { PodService, PodServiceSpec } from '../podservice/hook.js'
import {
  ALLOW_INGRESS_LABEL,
  DECORATOR_NAME,
  INGRESS_PORT_ANNOTATION,
  PROTECTED_LABEL,
  netpolDecorator,
  netpolDecoratorSpec,
  networkPolicyName,
  sync,
} from './hook.js'
import type { NetworkPolicy } from './hook.js'
import { DECORATOR_MANIFEST, decoratorControllerFor } from './stack.js'

const NS = 'pocs-kubernetes-metacontroller'

function podService(spec: PodServiceSpec, name = 'nginx'): PodService {
  return {
    apiVersion: 'homelabz.com.br/v1',
    kind: 'PodService',
    metadata: {
      name,
      namespace: NS,
      uid: 'ps-uid',
      labels: { [ALLOW_INGRESS_LABEL]: 'true' },
    },
    spec,
  }
}

describe('NetworkPolicy decorator hook', () => {
  it('attaches one NetworkPolicy named after the PodService, admitting TCP on its port', async () => {
    const out = await callDecoratorHook(sync, {
      object: podService({ image: 'nginx', port: 8080 }),
    })
    assert.equal(out.attachments.length, 1)
    const [policy] = out.attachments
    assert.deepEqual(policy, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'nginx-allow-ingress', labels: { [NAME_LABEL]: 'nginx' } },
      spec: {
        podSelector: { matchLabels: { [NAME_LABEL]: 'nginx' } },
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: 8080 }] }],
      },
    })
  })

  it('selects exactly the Pod the PodService controller creates (its labels match)', async () => {
    const parent = podService({ image: 'nginx' }, 'web')
    const out = await callDecoratorHook(sync, { object: parent })
    const pod = desiredPod(settingsOf(parent))
    const selector = out.attachments[0]?.spec?.podSelector.matchLabels ?? {}
    assert.ok(Object.keys(selector).length > 0)
    for (const [key, value] of Object.entries(selector)) {
      assert.equal(pod.metadata.labels?.[key], value, `the Pod has ${key}=${value}`)
    }
    const containerPort = pod.spec?.containers[0]?.ports?.[0]?.containerPort
    assert.equal(out.attachments[0]?.spec?.ingress?.[0]?.ports?.[0]?.port, containerPort)
  })

  it('uses the PodService default port (80) when spec.port is absent', async () => {
    const out = await callDecoratorHook(sync, { object: podService({ image: 'nginx' }) })
    assert.equal(out.attachments[0]?.spec?.ingress?.[0]?.ports?.[0]?.port, 80)
    assert.equal(out.annotations[INGRESS_PORT_ANNOTATION], 'TCP/80')
  })

  it('labels the PodService protected and annotates the open port, and nothing else', async () => {
    const out = await callDecoratorHook(sync, {
      object: podService({ image: 'nginx', port: 9090 }),
    })
    assert.deepEqual(out.labels, { [PROTECTED_LABEL]: 'true' })
    assert.deepEqual(out.annotations, { [INGRESS_PORT_ANNOTATION]: 'TCP/9090' })
  })

  it('never writes status, which belongs to the PodService controller', async () => {
    const parent: PodService = { ...podService({ image: 'nginx' }), status: { pods: 1 } }
    const out = await callDecoratorHook(sync, { object: parent })
    assert.equal(out.status, null)
  })

  it('gives the same answer whatever is already attached (pure, so it settles)', async () => {
    const parent = podService({ image: 'nginx', port: 8080 })
    const first = await callDecoratorHook(sync, { object: parent })
    const observed: Record<string, NetworkPolicy> = {}
    for (const policy of first.attachments) {
      observed[`${NS}/${policy.metadata.name ?? ''}`] = {
        ...policy,
        metadata: { ...policy.metadata, namespace: NS, uid: 'np-uid', resourceVersion: '7' },
      }
    }
    const second = await callDecoratorHook(sync, {
      object: parent,
      attachments: { 'NetworkPolicy.networking.k8s.io/v1': observed },
    })
    assert.deepEqual(second, first)
    assert.equal(second.resyncAfterSeconds, 0)
  })

  it('names one policy per PodService, so two PodServices never share one', () => {
    assert.notEqual(networkPolicyName('a'), networkPolicyName('b'))
    assert.equal(networkPolicyName('nginx'), 'nginx-allow-ingress')
  })
})

describe('NetworkPolicy decorator manifests', () => {
  it('decorator.yaml has the in-process spec, plus a v2 webhook', () => {
    const [controller] = readManifestFile(DECORATOR_MANIFEST)
    assert.equal(controller?.kind, 'DecoratorController')
    assert.equal(controller.metadata.name, DECORATOR_NAME)
    assert.equal(netpolDecorator.name, DECORATOR_NAME)
    const spec = controller['spec'] as typeof netpolDecoratorSpec & {
      hooks: { sync: { version: string; webhook: { url: string } } }
    }
    assert.deepEqual(spec.resources, netpolDecoratorSpec.resources)
    assert.deepEqual(spec.attachments, netpolDecoratorSpec.attachments)
    assert.equal(spec.hooks.sync.version, 'v2')
    assert.equal(spec.hooks.sync.webhook.url, 'http://127.0.0.1:8082/sync')
  })

  it('decoratorControllerFor rewrites only the webhook URL', () => {
    const controller = decoratorControllerFor('http://127.0.0.1:1234/sync')
    const spec = controller['spec'] as { hooks: { sync: { version: string; webhook: unknown } } }
    assert.deepEqual(spec.hooks.sync, {
      version: 'v2',
      webhook: { url: 'http://127.0.0.1:1234/sync' },
    })
  })

  it('the in-process definition adapts the sync hook only', () => {
    assert.equal(typeof netpolDecorator.hooks.sync, 'function')
    assert.equal(netpolDecorator.hooks.finalize, undefined)
    assert.equal(netpolDecorator.hooks.customize, undefined)
  })
})
