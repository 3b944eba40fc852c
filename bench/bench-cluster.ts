// Shared pieces of the benchmarks: a control plane, bounded-concurrency writes, and a Pod of
// realistic size.
import type { KubeObject } from '../src/core/kube-object.js'
import type { DynamicClient } from '../src/kube/dynamic-client.js'
import { NAMESPACES } from '../src/kube/well-known-resources.js'
export { CONFIGMAPS, NAMESPACES, PODS } from '../src/kube/well-known-resources.js'

/** Runs `count` tasks with at most `concurrency` in flight; resolves when all are done. */
export async function runBounded(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>
): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++
      await task(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/** Creates a namespace and returns its name. */
export async function createNamespace(client: DynamicClient, name: string): Promise<string> {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
  return name
}

/**
 * Builds a Pod shaped like a typical application Pod: two containers with env, ports,
 * resources, probes and volume mounts, labels and annotations (about 3 KB of JSON as stored,
 * managedFields included).
 */
export function realisticPod(name: string, namespace: string): KubeObject {
  const container = (cname: string, port: number): Record<string, unknown> => ({
    name: cname,
    image: `registry.example.com/team/${cname}:1.24.3`,
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'DATABASE_URL', value: 'postgres://db.internal:5432/app' },
    ],
    resources: {
      limits: { cpu: '500m', memory: '256Mi' },
      requests: { cpu: '100m', memory: '128Mi' },
    },
    readinessProbe: { httpGet: { path: '/ready', port }, periodSeconds: 10 },
    livenessProbe: { httpGet: { path: '/healthz', port }, initialDelaySeconds: 5 },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
  })
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: {
        app: 'web',
        tier: 'frontend',
        'app.kubernetes.io/name': 'web',
        'pod-template-hash': '5d8f7c9b4d',
      },
      annotations: { 'example.com/owner': 'team-a', 'example.com/revision': '42' },
    },
    spec: {
      containers: [container('web', 8080), container('sidecar', 9090)],
      volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
    },
  }
}

/** Formats bytes as MiB with one decimal. */
export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1)
}
