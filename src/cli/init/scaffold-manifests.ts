/**
 * The Kubernetes manifests of a scaffolded controller project: the CRD, the CompositeController,
 * the hook's Deployment and Service, a Kustomize base and a sample object.
 *
 * @module
 */
import { stringify } from 'yaml'
import type { KubeObject } from '../../core/kube-object.js'
import { rbacManifest } from '../rbac/rbac-manifest.js'
import type { ScaffoldNames } from './scaffold-names.js'

function yaml(...objects: readonly unknown[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 100 })).join('---\n')
}

/** The CRD: a structural schema with validation, a status subresource and printer columns. */
export function crdObject(n: ScaffoldNames): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${n.plural}.${n.group}` },
    spec: {
      group: n.group,
      scope: 'Namespaced',
      names: {
        kind: n.kind,
        plural: n.plural,
        singular: n.kind.toLowerCase(),
        listKind: `${n.kind}List`,
      },
      versions: [
        {
          name: n.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Message', type: 'string', jsonPath: '.spec.message' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'ConfigMaps', type: 'integer', jsonPath: '.status.configMaps' },
            { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `A ${n.kind}: spec.replicas ConfigMaps holding spec.message.`,
              required: ['spec'],
              properties: {
                spec: {
                  type: 'object',
                  required: ['message'],
                  properties: {
                    message: {
                      type: 'string',
                      minLength: 1,
                      description: 'What every ConfigMap says.',
                    },
                    replicas: {
                      type: 'integer',
                      minimum: 0,
                      maximum: 10,
                      default: 1,
                      description: 'How many ConfigMaps to keep (default 1).',
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    observedGeneration: { type: 'integer', description: 'Written by the engine.' },
                    configMaps: { type: 'integer', description: 'ConfigMaps that exist.' },
                    ready: { type: 'boolean', description: 'True when every ConfigMap exists.' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  }
}

/** The CompositeController; its webhook is the hook's Service in namespace `metacontroller`. */
export function controllerObject(n: ScaffoldNames): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: n.name },
    spec: {
      generateSelector: true,
      parentResource: { apiVersion: `${n.group}/${n.version}`, resource: n.plural },
      childResources: [
        { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
      ],
      hooks: { sync: { webhook: { url: `http://${n.name}-hook.metacontroller/sync` } } },
    },
  }
}

/**
 * `deploy/rbac.yaml`: what the engine may do to this controller's parents and children, as
 * `metactl rbac -f deploy/controller.yaml` prints it (one ClusterRole carrying metacontroller-ts'
 * aggregation label; upstream Metacontroller's engine may do everything and ignores it).
 */
function rbacYaml(n: ScaffoldNames): string {
  const source = { object: controllerObject(n), origin: 'deploy/controller.yaml' }
  return rbacManifest([source], { command: SCAFFOLD_RBAC_COMMAND }).yaml
}

/** The command that writes the scaffold's `deploy/rbac.yaml`, run in the project. */
export const SCAFFOLD_RBAC_COMMAND = 'metactl rbac -f deploy/controller.yaml'

/** Every manifest file, by path. */
export function manifestFiles(n: ScaffoldNames): Record<string, string> {
  const labels = { 'app.kubernetes.io/name': `${n.name}-hook` }
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${n.name}-hook`, namespace: 'metacontroller', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          // The restricted Pod Security Standard's fields, so the hook runs in any namespace.
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'hook',
              image: `${n.name}-hook:dev`,
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  }
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `${n.name}-hook`, namespace: 'metacontroller', labels },
    spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  }
  const sample = {
    apiVersion: `${n.group}/${n.version}`,
    kind: n.kind,
    metadata: { name: 'hello', namespace: 'default' },
    spec: { message: 'Hello from metacontroller-ts', replicas: 2 },
  }
  return {
    'deploy/rbac.yaml': rbacYaml(n),
    'deploy/crd.yaml': yaml(crdObject(n)),
    'deploy/controller.yaml': yaml(controllerObject(n)),
    'deploy/hook.yaml': yaml(deployment, service),
    'deploy/kustomization.yaml': yaml({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['crd.yaml', 'rbac.yaml', 'controller.yaml', 'hook.yaml'],
    }),
    'deploy/samples/hello.yaml': yaml(sample),
  }
}
