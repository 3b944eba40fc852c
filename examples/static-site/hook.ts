/**
 * The StaticSite sync hook: for each StaticSite, a ConfigMap holding the page, a Deployment of
 * nginx serving it, and a Service in front; the status says how many replicas the Deployment
 * reports ready.
 *
 * @remarks
 * Pure: the answer depends only on the request, so a resync writes nothing. The Pod template
 * carries a hash of the page, so a new page rolls the Deployment (nginx reads the file at start).
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { defineCompositeHook, listObserved } from 'metacontroller-ts'
import type { ConfigMap, Deployment, Service } from 'metacontroller-ts'

/** A StaticSite, as in crd.yaml. */
export interface StaticSite {
  apiVersion: 'static.example.com/v1'
  kind: 'StaticSite'
  metadata: { name: string; namespace?: string; uid?: string; generation?: number }
  spec: { html: string; replicas?: number; image?: string }
  status?: StaticSiteStatus
}

/** What the hook writes into `status`. */
export interface StaticSiteStatus {
  /** Ready replicas of the Deployment, as it reports them. */
  readyReplicas: number
  /** True once the Deployment has rolled out this page to every replica. */
  ready: boolean
  /** The Service's address inside the cluster. */
  url: string
  /** The hash of the page the Pods were last asked to serve. */
  contentHash: string
}

/** The child types of the controller. */
export type StaticSiteChild = ConfigMap | Deployment | Service

/** The name of the CompositeController (controller.yaml). */
export const CONTROLLER_NAME = 'static-site'
/** The label on every child, and the selector of the Deployment and Service. */
export const SITE_LABEL = 'static.example.com/site'
/** The Pod template annotation that rolls the Deployment when the page changes. */
export const CONTENT_HASH_ANNOTATION = 'static.example.com/content-hash'

function contentHash(html: string): string {
  return createHash('sha256').update(html).digest('hex').slice(0, 16)
}

function deploymentFor(site: StaticSite, hash: string): Deployment {
  const name = site.metadata.name
  const labels = { [SITE_LABEL]: name }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: site.spec.replicas ?? 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { [CONTENT_HASH_ANNOTATION]: hash } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: site.spec.image ?? 'nginx:1.27-alpine',
              ports: [{ name: 'http', containerPort: 80 }],
              volumeMounts: [{ name: 'content', mountPath: '/usr/share/nginx/html' }],
            },
          ],
          volumes: [{ name: 'content', configMap: { name: `${name}-content` } }],
        },
      },
    },
  }
}

/** The status, from the Deployment the engine observed (not the one asked for). */
function statusFrom(
  site: StaticSite,
  observed: Deployment | undefined,
  hash: string
): StaticSiteStatus {
  const replicas = site.spec.replicas ?? 1
  const readyReplicas = observed?.status?.readyReplicas ?? 0
  const rolledOut =
    observed !== undefined &&
    observed.spec?.template.metadata?.annotations?.[CONTENT_HASH_ANNOTATION] === hash &&
    (observed.status?.observedGeneration ?? 0) >= (observed.metadata?.generation ?? 1) &&
    (observed.status?.updatedReplicas ?? 0) === replicas
  const namespace = site.metadata.namespace ?? 'default'
  return {
    readyReplicas,
    ready: rolledOut && readyReplicas === replicas,
    url: `http://${site.metadata.name}.${namespace}.svc`,
    contentHash: hash,
  }
}

/** The sync hook. */
export const sync = defineCompositeHook<StaticSite, StaticSiteChild, StaticSiteStatus>(
  ({ parent, children }) => {
    const name = parent.metadata.name
    const hash = contentHash(parent.spec.html)
    const labels = { [SITE_LABEL]: name }
    const observed = listObserved(children, 'Deployment.apps/v1').find(
      (d) => d.metadata?.name === name
    )
    return {
      status: statusFrom(parent, observed, hash),
      children: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${name}-content`, labels },
          data: { 'index.html': parent.spec.html },
        },
        deploymentFor(parent, hash),
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, labels },
          spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
        },
      ],
    }
  }
)
