/**
 * The check `metactl dev` makes when it starts and when a manifest changes: does the identity the
 * engine will run as in this cluster hold every right the project's controllers need? The
 * engine's ServiceAccount (as `deploy/` names it) is asked about through SubjectAccessReviews when
 * it exists in the cluster; otherwise `deploy/`'s own RBAC objects are read, since dev's
 * in-process engine runs with the user's credentials and would hide the gap.
 *
 * @module
 */
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import { rbacControllerOf } from '../../api/controller-rbac-rules.js'
import type { RbacController } from '../../api/controller-rbac-rules.js'
import type { KubeObject } from '../../core/kube-object.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import { deployGrantedRules, engineServiceAccountOf } from './deploy-grants.js'
import type { ServiceAccountName } from './deploy-grants.js'
import { describeGap, gapsOf, missingRights, neededRights } from './missing-rights.js'
import type { NeededRight } from './missing-rights.js'
import type { ProjectManifests } from './project-manifests.js'

const SERVICE_ACCOUNTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
}
const SUBJECT_ACCESS_REVIEWS: ResourceRef = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'subjectaccessreviews',
  namespaced: false,
}

/** The controllers whose spec parses (dev reports the others when it fails to start them). */
function controllersOf(manifests: ProjectManifests): RbacController[] {
  return manifests.controllers.flatMap((object) => {
    try {
      return rbacControllerOf(object) ?? []
    } catch (error) {
      if (error instanceof ControllerSpecError) return []
      throw error
    }
  })
}

/** Asks the API server whether `account` may exercise `right` cluster-wide. */
async function accountMay(
  client: DynamicClient,
  account: ServiceAccountName,
  right: NeededRight
): Promise<boolean> {
  const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>(
    SUBJECT_ACCESS_REVIEWS,
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: `system:serviceaccount:${account.namespace}:${account.name}`,
        groups: [
          'system:serviceaccounts',
          `system:serviceaccounts:${account.namespace}`,
          'system:authenticated',
        ],
        resourceAttributes: {
          verb: right.verb,
          group: right.group,
          resource: right.resource,
          ...(right.subresource === undefined ? {} : { subresource: right.subresource }),
        },
      },
    }
  )
  return review.status?.allowed === true
}

async function accountExists(client: DynamicClient, account: ServiceAccountName) {
  try {
    await client.get(SERVICE_ACCOUNTS, account.name, { namespace: account.namespace })
    return true
  } catch (error) {
    if (error instanceof NotFoundError) return false
    throw error
  }
}

/** The rights of `needed` the cluster refuses `account`, each asked about once. */
async function refusedInCluster(
  client: DynamicClient,
  account: ServiceAccountName,
  needed: readonly NeededRight[]
): Promise<NeededRight[]> {
  const answers = new Map<string, Promise<boolean>>()
  const refused: NeededRight[] = []
  for (const right of needed) {
    const key = `${right.verb} ${right.group} ${right.resource} ${right.subresource ?? ''}`
    const answer = answers.get(key) ?? accountMay(client, account, right)
    answers.set(key, answer)
    if (!(await answer)) refused.push(right)
  }
  return refused
}

/** The command that writes the role `controller` needs, and the file it belongs in. */
function fixOf(manifests: ProjectManifests, controller: string, manifestDir: string) {
  const files = [...new Set(manifests.controllers.map((c) => manifests.origins.get(c) ?? ''))]
  const role = manifests.objects.find(
    (o) => o.kind === 'ClusterRole' && o.metadata.name === `metacontroller-ts:${controller}`
  )
  const roleFile = (role && manifests.origins.get(role)) ?? `${manifestDir}/rbac.yaml`
  return {
    command: `metactl rbac ${files.map((f) => `-f ${f}`).join(' ')} > ${roleFile}`,
    roleFile,
  }
}

/**
 * Returns one warning per resource on which a controller of `manifests` needs rights the engine
 * would lack: the controller, the verbs, the resource (group, resource, subresource), the fix.
 *
 * @param manifestDir - the manifest directory as shown to the user (`deploy`).
 */
export async function checkEngineRights(
  client: DynamicClient,
  manifests: ProjectManifests,
  manifestDir: string
): Promise<string[]> {
  const needed = controllersOf(manifests).flatMap((c) => neededRights(c))
  const account = engineServiceAccountOf(manifests.objects)
  const shown = `ServiceAccount ${account.namespace}/${account.name}`
  const inCluster = await accountExists(client, account)
  const missing = inCluster
    ? await refusedInCluster(client, account, needed)
    : missingRights(needed, deployGrantedRules(manifests.objects, account))
  return gapsOf(missing).map((gap) => {
    const fix = fixOf(manifests, gap.controller, manifestDir)
    const head = `warning: ${gap.kind} ${gap.controller} needs ${describeGap(gap)}`
    return inCluster
      ? `${head}, which the engine's ${shown} lacks in this cluster; fix: ${fix.command}, then kubectl apply -f ${fix.roleFile}`
      : `${head}, which ${manifestDir}/ does not grant the engine's ${shown}; fix: ${fix.command}`
  })
}
