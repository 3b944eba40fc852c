// The controller the upgrade tests keep busy: parents of kind Churn (example.com/v1, status
// subresource), each owning `spec.count` ConfigMaps `<parent>.<i>` holding `spec.value`; the sync
// hook runs in-cluster, a Deployment of the engine image with a few lines of Node.js as its
// command (no other image needed), reached at its Service name through the cluster's DNS.
import type { KubeObject } from '../../src/core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../../src/kube/dynamic-client.js'

/** The parents' resource. */
export const CHURNS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'churns',
  namespaced: true,
}

/** The children's resource. */
export const CONFIGMAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}

const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
}
const COMPOSITES: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'compositecontrollers',
  namespaced: false,
}
const NAMESPACES: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  namespaced: false,
}
const DEPLOYMENTS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
}
const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services', namespaced: true }

/** The rights the engine needs over parents and children (the chart's `rbac.extraRules`). */
export const CHURN_RULES = [
  {
    apiGroups: ['example.com'],
    resources: ['churns'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  { apiGroups: ['example.com'], resources: ['churns/status'], verbs: ['get', 'update', 'patch'] },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
]

/** The label every child carries (the convergence check lists by it). */
export const CHILD_LABEL = 'upgrade-churn/child'

// The sync hook: `count` ConfigMaps `<parent>.<i>` with `data.value`, status `{ children }`.
const HOOK_SCRIPT = `
const http = require('node:http')
http.createServer((req, res) => {
  let body = ''
  req.on('data', (chunk) => { body += chunk })
  req.on('end', () => {
    const { parent } = JSON.parse(body)
    const count = parent.spec.count
    const children = []
    for (let i = 0; i < count; i++) {
      children.push({ apiVersion: 'v1', kind: 'ConfigMap',
        metadata: { name: parent.metadata.name + '.' + i, labels: { '${CHILD_LABEL}': 'true' } },
        data: { value: parent.spec.value } })
    }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ status: { children: count }, children }))
  })
}).listen(8080)
`

function churnCrd(): KubeObject {
  const spec = {
    type: 'object',
    properties: { count: { type: 'integer', minimum: 0 }, value: { type: 'string' } },
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'churns.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'churns', singular: 'churn', kind: 'Churn' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec,
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  }
}

function compositeController(hookNamespace: string): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'churn' },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: 'example.com/v1', resource: 'churns' },
      childResources: [
        { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
      ],
      hooks: { sync: { webhook: { url: `http://churn-hook.${hookNamespace}/sync` } } },
    },
  }
}

function hookDeployment(namespace: string, image: string): KubeObject {
  const labels = { app: 'churn-hook' }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'churn-hook', namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'hook',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['node', '-e', HOOK_SCRIPT],
              ports: [{ containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
            },
          ],
        },
      },
    },
  }
}

function hookService(namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'churn-hook', namespace },
    spec: { selector: { app: 'churn-hook' }, ports: [{ port: 80, targetPort: 8080 }] },
  }
}

/**
 * Creates the Churn CRD, the hook (a Deployment of `image` and its Service in `hookNamespace`)
 * and the CompositeController. Waits for nothing: the caller waits for the hook to be available.
 */
export async function installChurnController(
  client: DynamicClient,
  hookNamespace: string,
  image: string
): Promise<void> {
  await client.create(CRDS, churnCrd())
  await client.create(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: hookNamespace },
  })
  await client.create(DEPLOYMENTS, hookDeployment(hookNamespace, image))
  await client.create(SERVICES, hookService(hookNamespace))
  await client.create(COMPOSITES, compositeController(hookNamespace))
}

/** Creates a namespace for a scenario's parents. */
export async function createNamespace(client: DynamicClient, name: string): Promise<void> {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
}
