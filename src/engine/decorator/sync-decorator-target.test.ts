import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DECORATOR_CONTROLLER_ANNOTATION } from '../../api/decorator-controller-spec.js'
import type { KubeObject } from '../../core/kube-object.js'
import { ObjectStore } from '../../runtime/object-store.js'
import { observeAttachments } from './sync-decorator-target.js'

const TYPE = 'ConfigMap.v1'

function target(uid: string, namespace = 'ns'): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: uid, namespace, uid } }
}

function attachment(
  name: string,
  controllerUid: string | undefined,
  decorator = 'deco'
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'ns',
      annotations: { [DECORATOR_CONTROLLER_ANNOTATION]: decorator },
      ...(controllerUid === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: controllerUid,
                uid: controllerUid,
                controller: true,
              },
            ],
          }),
    },
  }
}

/** Target t0's 2 attachments, one of another decorator, and `unrelated` other objects. */
function namespaceWith(unrelated: number): ObjectStore {
  const store = new ObjectStore()
  store.upsert(attachment('mine-1', 't0'))
  store.upsert(attachment('mine-2', 't0'))
  store.upsert(attachment('other-decorator', 't0', 'other'))
  for (let i = 0; i < unrelated; i += 1) {
    // Half are other targets' attachments, half nobody's.
    store.upsert(attachment(`unrelated-${i}`, i % 2 === 0 ? `t${i + 1}` : undefined))
  }
  return store
}

describe('observeAttachments', () => {
  it("lists the target's attachments of this decorator only", () => {
    const observed = observeAttachments(
      'deco',
      [TYPE],
      target('t0'),
      new Map([[TYPE, namespaceWith(10)]])
    )
    assert.deepEqual([...(observed.get(TYPE)?.keys() ?? [])], ['ns/mine-1', 'ns/mine-2'])
  })

  it('visits as many objects with 100× more unrelated objects in the namespace', () => {
    // A complexity check, not a timing: the attachments come from the controller-UID index.
    const visitsWith = (unrelated: number): number => {
      const store = namespaceWith(unrelated)
      observeAttachments('deco', [TYPE], target('t0'), new Map([[TYPE, store]]))
      return store.visits
    }
    const small = visitsWith(100)
    assert.equal(small, 3, "the target's three controlled objects")
    assert.equal(visitsWith(10_000), small)
  })
})
