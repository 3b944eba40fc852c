// What the in-cluster fault tests (test/operations/) apply besides the chart: a parent CRD, a
// hook that runs in-cluster (a Deployment of the engine image running a small Node server from a
// ConfigMap, behind a Service the engine calls by name), and the CompositeController. Each parent
// asks for `spec.children` ConfigMaps `<parent>.<i>` holding `spec.value`; the hook reports the
// value it answered for in `status.value`.
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { crdFixture } from './crd-fixture.js'

/** Where the parents and their children live. */
export const FAULT_NAMESPACE = 'faults'
/** Where the engine (the chart's release) and the hook run. */
export const ENGINE_NAMESPACE = 'metacontroller'
/** The hook's Deployment and Service. */
export const HOOK_NAME = 'fault-hook'

/** The parents' resource. */
export const FAULT_PARENTS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'faultparents',
  namespaced: true,
}

/** The children's resource. */
export const CONFIG_MAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}

// The hook: any POST is a sync request; anything else (the probes) gets 200.
const HOOK_SOURCE = `import { createServer } from 'node:http'
createServer((req, res) => {
  if (req.method !== 'POST') return res.end('ok')
  let body = ''
  req.on('data', (chunk) => (body += chunk))
  req.on('end', () => {
    const { parent } = JSON.parse(body)
    const { children: count, value } = parent.spec
    const children = Array.from({ length: count }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: parent.metadata.name + '.' + i },
      data: { value },
    }))
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ status: { value }, children }))
  })
}).listen(8080)
process.on('SIGTERM', () => process.exit(0))
`

/** The parents' CRD: `spec.children` (count) and `spec.value`, a status subresource. */
export function faultParentCrd(): KubeObject {
  const crd = crdFixture({
    kind: 'FaultParent',
    plural: 'faultparents',
    scope: 'Namespaced',
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { children: { type: 'integer' }, value: { type: 'string' } },
        },
        status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  })
  const spec = crd['spec'] as { versions: Record<string, unknown>[] }
  spec.versions = spec.versions.map((v) => ({ ...v, subresources: { status: {} } }))
  return crd
}

/**
 * The hook's ConfigMap, Deployment and Service. `command` replaces the container's command (a
 * crash loop: one that exits); the Deployment recreates its Pod on a change, so a broken hook is
 * really down rather than hidden behind the old Pod of a rolling update.
 */
export function hookManifests(image: string, command?: readonly string[]): KubeObject[] {
  const labels = { app: HOOK_NAME }
  const meta = { name: HOOK_NAME, namespace: ENGINE_NAMESPACE }
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { 'hook.mjs': HOOK_SOURCE } },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta,
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'hook',
                image,
                imagePullPolicy: 'IfNotPresent',
                command: [...(command ?? ['node', '/hook/hook.mjs'])],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
                volumeMounts: [{ name: 'hook', mountPath: '/hook' }],
              },
            ],
            volumes: [{ name: 'hook', configMap: { name: HOOK_NAME } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta,
      spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
    },
  ]
}

/** The CompositeController: FaultParents own ConfigMaps, synced by the hook's Service. */
export function faultController(): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'fault-parents' },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: 'example.com/v1', resource: 'faultparents' },
      childResources: [
        { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
      ],
      hooks: {
        sync: {
          webhook: {
            service: { name: HOOK_NAME, namespace: ENGINE_NAMESPACE, port: 80 },
            path: '/sync',
            timeout: '5s',
          },
        },
      },
    },
  }
}

/** The rights the engine needs for these parents and children (the chart's rbac.extraRules). */
export const FAULT_RULES = [
  {
    apiGroups: ['example.com'],
    resources: ['faultparents'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  {
    apiGroups: ['example.com'],
    resources: ['faultparents/status'],
    verbs: ['get', 'update', 'patch'],
  },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
]
