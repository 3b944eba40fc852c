/**
 * The real node's cluster DNS as objects: CoreDNS (tools/coredns) as the `coredns` Deployment in
 * `kube-system` behind the `kube-dns` Service at a fixed address, the kubelet's `clusterDNS`.
 * Pure values, so what Pods are told and what CoreDNS serves are pinned by unit tests.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { COREDNS_IMAGE } from './coredns-image.js'
import { REAL_NODE_NAME } from './real-node-layout.js'

/** The `kube-dns` Service's ClusterIP: the conventional `.10` of SERVICE_CIDR (10.0.0.0/24). */
export const CLUSTER_DNS_IP = '10.0.0.10'
/** The cluster's DNS domain (the kubelet's `clusterDomain`). */
export const CLUSTER_DOMAIN = 'cluster.local'
/** Namespace and label of the DNS Pods (the names kubeadm's clusters use). */
export const CLUSTER_DNS_NAMESPACE = 'kube-system'
/** The label selecting the DNS Pods. */
export const CLUSTER_DNS_LABELS = { 'k8s-app': 'kube-dns' } as const

// CoreDNS listens above 1024, so it runs as a user without any capability or sysctl; the Service
// maps port 53 to it.
const DNS_PORT = 1053
const HEALTH_PORT = 8080
const READY_PORT = 8181

/**
 * The Corefile: the kubernetes plugin answers `cluster.local` and reverse lookups; every other
 * name gets NXDOMAIN from template at once. There is no forward plugin: the cluster's network
 * namespace has no outside network, so forwarding would only turn a fast NXDOMAIN into a
 * resolver timeout.
 */
export function corefile(): string {
  return `.:${DNS_PORT} {
    errors
    log . {
        class denial error
    }
    health :${HEALTH_PORT}
    ready :${READY_PORT}
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        ttl 5
    }
    template ANY ANY {
        rcode NXDOMAIN
    }
    cache 30
    loadbalance
}
`
}

const meta = (name: string, namespaced = true): Record<string, unknown> => ({
  name,
  ...(namespaced ? { namespace: CLUSTER_DNS_NAMESPACE } : {}),
  labels: { ...CLUSTER_DNS_LABELS },
})

// What the kubernetes plugin watches (EndpointSlices since CoreDNS 1.8; no Pods: `pods insecure`).
function rbacObjects(): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('coredns') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta('system:coredns', false),
      rules: [
        { apiGroups: [''], resources: ['services', 'namespaces'], verbs: ['list', 'watch'] },
        {
          apiGroups: ['discovery.k8s.io'],
          resources: ['endpointslices'],
          verbs: ['list', 'watch'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta('system:coredns', false),
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:coredns',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: CLUSTER_DNS_NAMESPACE }],
    },
  ]
}

function podSpec(): Record<string, unknown> {
  const probe = (path: string, port: number): Record<string, unknown> => ({
    httpGet: { path, port },
    periodSeconds: 2,
    timeoutSeconds: 2,
  })
  return {
    serviceAccountName: 'coredns',
    // Its own queries never go to itself: the node's (empty) resolver configuration.
    dnsPolicy: 'Default',
    priorityClassName: 'system-cluster-critical',
    // A cluster may have KWOK's simulated nodes beside the real one: a DNS Pod "running" there has
    // no container, so the Service would route queries nowhere.
    nodeSelector: { 'kubernetes.io/hostname': REAL_NODE_NAME },
    securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 },
    containers: [
      {
        name: 'coredns',
        image: COREDNS_IMAGE,
        // Imported into containerd by the node; there is no registry to pull it from.
        imagePullPolicy: 'Never',
        args: ['-conf', '/etc/coredns/Corefile'],
        ports: [
          { name: 'dns', containerPort: DNS_PORT, protocol: 'UDP' },
          { name: 'dns-tcp', containerPort: DNS_PORT, protocol: 'TCP' },
        ],
        readinessProbe: probe('/ready', READY_PORT),
        livenessProbe: { ...probe('/health', HEALTH_PORT), failureThreshold: 5 },
        resources: { limits: { memory: '170Mi' }, requests: { cpu: '50m', memory: '50Mi' } },
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
        volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
      },
    ],
    volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
  }
}

/** Every object of the cluster DNS, in the order they are created. */
export function clusterDnsObjects(): KubeObject[] {
  return [
    ...rbacObjects(),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta('coredns'),
      data: { Corefile: corefile() },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('coredns'),
      spec: {
        replicas: 1,
        selector: { matchLabels: { ...CLUSTER_DNS_LABELS } },
        template: { metadata: { labels: { ...CLUSTER_DNS_LABELS } }, spec: podSpec() },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('kube-dns'),
      spec: {
        clusterIP: CLUSTER_DNS_IP,
        selector: { ...CLUSTER_DNS_LABELS },
        ports: [
          { name: 'dns', port: 53, targetPort: DNS_PORT, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: DNS_PORT, protocol: 'TCP' },
        ],
      },
    },
  ]
}
