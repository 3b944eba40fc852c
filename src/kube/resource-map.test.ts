// Real-shaped discovery documents (trimmed copies of what kube-apiserver 1.37 serves) parsed
// into a ResourceMap, checked through its lookups.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  parseApiVersions,
} from './parse-discovery.js'
import { formatApiVersion, parseApiVersion, ResourceMap } from './resource-map.js'
import type { DiscoveredGroup } from './resource-map.js'

const CORE_AGGREGATED = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  metadata: {},
  items: [
    {
      metadata: {},
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'namespaces',
              responseKind: { group: '', version: '', kind: 'Namespace' },
              scope: 'Cluster',
              singularResource: 'namespace',
              verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
              shortNames: ['ns'],
              subresources: [
                {
                  subresource: 'finalize',
                  responseKind: { group: '', version: '', kind: 'Namespace' },
                  verbs: ['update'],
                },
                {
                  subresource: 'status',
                  responseKind: { group: '', version: '', kind: 'Namespace' },
                  verbs: ['get', 'patch', 'update'],
                },
              ],
            },
            {
              resource: 'pods',
              responseKind: { group: '', version: '', kind: 'Pod' },
              scope: 'Namespaced',
              singularResource: 'pod',
              verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'watch'],
              shortNames: ['po'],
              categories: ['all'],
              subresources: [
                {
                  subresource: 'eviction',
                  responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' },
                  verbs: ['create'],
                },
                {
                  subresource: 'exec',
                  responseKind: { group: '', version: '', kind: 'PodExecOptions' },
                  verbs: ['create', 'get'],
                },
                {
                  subresource: 'log',
                  responseKind: { group: '', version: '', kind: 'Pod' },
                  verbs: ['get'],
                },
                {
                  subresource: 'status',
                  responseKind: { group: '', version: '', kind: 'Pod' },
                  verbs: ['get', 'patch', 'update'],
                },
              ],
            },
          ],
          freshness: 'Current',
        },
      ],
    },
  ],
}

const APIS_AGGREGATED = {
  kind: 'APIGroupDiscoveryList',
  apiVersion: 'apidiscovery.k8s.io/v2',
  metadata: {},
  items: [
    {
      metadata: { name: 'apps', creationTimestamp: null },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'deployments',
              responseKind: { group: '', version: '', kind: 'Deployment' },
              scope: 'Namespaced',
              singularResource: 'deployment',
              verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
              shortNames: ['deploy'],
              categories: ['all'],
              subresources: [
                {
                  subresource: 'scale',
                  responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
                  verbs: ['get', 'patch', 'update'],
                },
                {
                  subresource: 'status',
                  responseKind: { group: '', version: '', kind: 'Deployment' },
                  verbs: ['get', 'patch', 'update'],
                },
              ],
            },
          ],
          freshness: 'Current',
        },
      ],
    },
    {
      metadata: { name: 'autoscaling' },
      versions: [
        {
          version: 'v2',
          resources: [
            {
              resource: 'horizontalpodautoscalers',
              responseKind: { group: '', version: '', kind: 'HorizontalPodAutoscaler' },
              scope: 'Namespaced',
              singularResource: 'horizontalpodautoscaler',
              verbs: ['get', 'list', 'watch'],
              shortNames: ['hpa'],
            },
          ],
        },
        {
          version: 'v1',
          resources: [
            {
              resource: 'horizontalpodautoscalers',
              responseKind: { group: '', version: '', kind: 'HorizontalPodAutoscaler' },
              scope: 'Namespaced',
              verbs: ['get', 'list', 'watch'],
            },
          ],
          freshness: 'Current',
        },
      ],
    },
    {
      metadata: { name: 'example.metacontroller-ts.dev' },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'widgets',
              responseKind: {
                group: 'example.metacontroller-ts.dev',
                version: 'v1',
                kind: 'Widget',
              },
              scope: 'Namespaced',
              singularResource: 'widget',
              verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update'],
              shortNames: ['wd'],
              categories: ['example'],
              subresources: [
                {
                  subresource: 'status',
                  responseKind: {
                    group: 'example.metacontroller-ts.dev',
                    version: 'v1',
                    kind: 'Widget',
                  },
                  verbs: ['get', 'patch', 'update'],
                },
              ],
              futureField: { ignored: true },
            },
          ],
          freshness: 'Current',
        },
      ],
    },
  ],
}

const CORE_VERSIONS = {
  kind: 'APIVersions',
  versions: ['v1'],
  serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
}

const GROUP_LIST = {
  kind: 'APIGroupList',
  apiVersion: 'v1',
  groups: [
    {
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    },
    {
      name: 'autoscaling',
      versions: [
        { groupVersion: 'autoscaling/v2', version: 'v2' },
        { groupVersion: 'autoscaling/v1', version: 'v1' },
      ],
      preferredVersion: { groupVersion: 'autoscaling/v2', version: 'v2' },
    },
  ],
}

const CORE_RESOURCE_LIST = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [
    {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
      storageVersionHash: 'xPOwRZ+Yhw8=',
    },
    {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    },
    {
      name: 'pods/exec',
      singularName: '',
      namespaced: true,
      kind: 'PodExecOptions',
      verbs: ['create', 'get'],
    },
    { name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] },
    {
      name: 'pods/status',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    },
    {
      name: 'namespaces',
      singularName: 'namespace',
      namespaced: false,
      kind: 'Namespace',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['ns'],
    },
    { name: 'ghosts/status', namespaced: true, kind: 'Ghost', verbs: ['get'] },
  ],
}

const APPS_RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'apps/v1',
  resources: [
    {
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    },
    {
      name: 'deployments',
      singularName: 'deployment',
      namespaced: true,
      kind: 'Deployment',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
    },
    {
      name: 'deployments/status',
      singularName: '',
      namespaced: true,
      kind: 'Deployment',
      verbs: ['get', 'patch', 'update'],
    },
  ],
}

function aggregatedMap(): ResourceMap {
  return new ResourceMap([
    ...parseAggregatedDiscovery(CORE_AGGREGATED),
    ...parseAggregatedDiscovery(APIS_AGGREGATED),
  ])
}

function legacyMap(): ResourceMap {
  const groups: DiscoveredGroup[] = [
    {
      name: '',
      versions: parseApiVersions(CORE_VERSIONS).map((version) => ({
        version,
        freshness: 'Current' as const,
        resources: parseApiResourceList(CORE_RESOURCE_LIST, '', version),
      })),
    },
  ]
  for (const group of parseApiGroupList(GROUP_LIST)) {
    groups.push({
      name: group.name,
      ...(group.preferredVersion === undefined ? {} : { preferredVersion: group.preferredVersion }),
      versions: group.versions.map((version) => ({
        version,
        freshness: 'Current' as const,
        resources:
          group.name === 'apps'
            ? parseApiResourceList(APPS_RESOURCE_LIST, group.name, version)
            : [],
      })),
    })
  }
  return new ResourceMap(groups)
}

describe('ResourceMap from aggregated discovery', () => {
  const map = aggregatedMap()

  it('finds core pods by kind, with scope, subresources, verbs and short names', () => {
    const pods = map.lookup({ apiVersion: 'v1', kind: 'Pod' })
    assert.ok(pods)
    assert.deepEqual(pods.ref, { group: '', version: 'v1', resource: 'pods', namespaced: true })
    assert.equal(pods.apiVersion, 'v1')
    assert.equal(pods.kind, 'Pod')
    assert.deepEqual(pods.responseKind, { group: '', version: 'v1', kind: 'Pod' })
    assert.equal(pods.singularName, 'pod')
    assert.deepEqual(pods.subresources, ['eviction', 'exec', 'log', 'status'])
    assert.ok(pods.verbs.includes('watch'))
    assert.deepEqual(pods.shortNames, ['po'])
    assert.deepEqual(pods.categories, ['all'])
    assert.equal(pods.subresource, undefined)
  })

  it('knows cluster-scoped resources', () => {
    const ns = map.lookupResource('v1', 'namespaces')
    assert.equal(ns?.ref.namespaced, false)
    assert.equal(ns.kind, 'Namespace')
  })

  it('finds apps deployments with the scale subresource', () => {
    const deployments = map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' })
    assert.deepEqual(deployments?.ref, {
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      namespaced: true,
    })
    assert.deepEqual(deployments.subresources, ['scale', 'status'])
  })

  it('looks up a subresource by its slash name, with its own kind and verbs', () => {
    const scale = map.lookupResource('apps/v1', 'deployments/scale')
    assert.ok(scale)
    assert.equal(scale.subresource, 'scale')
    assert.equal(scale.ref.resource, 'deployments')
    assert.equal(scale.kind, 'Scale')
    assert.deepEqual(scale.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' })
    assert.deepEqual(scale.verbs, ['get', 'patch', 'update'])
    assert.deepEqual(scale.subresources, [])
    assert.equal(map.lookupResource('v1', 'pods/exec')?.kind, 'PodExecOptions')
    assert.deepEqual(map.lookupResource('v1', 'pods/eviction')?.responseKind, {
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
    })
  })

  it('maps a kind to its main resource, never to a subresource of the same kind', () => {
    assert.equal(map.lookup({ apiVersion: 'v1', kind: 'Pod' })?.subresource, undefined)
    assert.equal(map.lookup({ apiVersion: 'v1', kind: 'PodExecOptions' }), undefined)
  })

  it('finds a CRD and ignores unknown fields', () => {
    const widgets = map.lookup({ apiVersion: 'example.metacontroller-ts.dev/v1', kind: 'Widget' })
    assert.equal(widgets?.ref.resource, 'widgets')
    assert.deepEqual(widgets.subresources, ['status'])
    assert.deepEqual(widgets.shortNames, ['wd'])
  })

  it('reports the preferred version as the first listed', () => {
    assert.equal(map.preferredVersion('autoscaling'), 'v2')
    assert.equal(map.preferredVersion(''), 'v1')
    assert.equal(map.preferredVersion('apps'), 'v1')
    assert.equal(map.preferredVersion('nope.example.com'), undefined)
    // A version without freshness is Current.
    assert.equal(map.groupVersion('autoscaling/v2')?.freshness, 'Current')
  })

  it('lists every main resource of every group-version', () => {
    const names = map.resources().map((r) => `${r.apiVersion} ${r.ref.resource}`)
    assert.deepEqual(names, [
      'v1 namespaces',
      'v1 pods',
      'apps/v1 deployments',
      'autoscaling/v2 horizontalpodautoscalers',
      'autoscaling/v1 horizontalpodautoscalers',
      'example.metacontroller-ts.dev/v1 widgets',
    ])
  })

  it('misses unknown kinds, versions and malformed apiVersions', () => {
    assert.equal(map.lookup({ apiVersion: 'apps/v1', kind: 'Gadget' }), undefined)
    assert.equal(map.lookup({ apiVersion: 'apps/v2', kind: 'Deployment' }), undefined)
    assert.equal(map.lookupResource('v1', 'pods/nope'), undefined)
    assert.equal(map.lookup({ apiVersion: 'a/b/c', kind: 'Pod' }), undefined)
  })

  it('is frozen', () => {
    const pods = map.lookup({ apiVersion: 'v1', kind: 'Pod' })
    assert.ok(pods && Object.isFrozen(pods) && Object.isFrozen(pods.ref))
    assert.ok(Object.isFrozen(pods.subresources) && Object.isFrozen(map.resources()))
    assert.ok(Object.isFrozen(map.groups()[0]?.versions[0]?.resources))
  })
})

describe('ResourceMap from legacy discovery', () => {
  const map = legacyMap()

  it('folds pods/status entries into subresources of pods', () => {
    const pods = map.lookup({ apiVersion: 'v1', kind: 'Pod' })
    assert.deepEqual(pods?.ref, { group: '', version: 'v1', resource: 'pods', namespaced: true })
    assert.deepEqual(pods.subresources, ['eviction', 'exec', 'log', 'status'])
    assert.equal(map.lookupResource('v1', 'pods/status')?.kind, 'Pod')
    assert.deepEqual(map.lookupResource('v1', 'pods/eviction')?.responseKind, {
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
    })
  })

  it('keeps a subresource listed before its parent and drops one without a parent', () => {
    const deployments = map.lookupResource('apps/v1', 'deployments')
    assert.deepEqual(deployments?.subresources, ['scale', 'status'])
    assert.equal(map.lookupResource('apps/v1', 'deployments/scale')?.kind, 'Scale')
    assert.equal(map.lookupResource('v1', 'ghosts/status'), undefined)
    assert.equal(map.lookup({ apiVersion: 'v1', kind: 'Ghost' }), undefined)
  })

  it('reads scope from namespaced', () => {
    assert.equal(map.lookupResource('v1', 'namespaces')?.ref.namespaced, false)
  })

  it('uses the preferredVersion the server names', () => {
    assert.equal(map.preferredVersion('autoscaling'), 'v2')
    const reordered = new ResourceMap([
      {
        name: 'autoscaling',
        preferredVersion: 'v1',
        versions: [
          { version: 'v2', freshness: 'Current', resources: [] },
          { version: 'v1', freshness: 'Current', resources: [] },
        ],
      },
    ])
    assert.equal(reordered.preferredVersion('autoscaling'), 'v1')
  })

  it('serves the same resources as the aggregated documents for the same server', () => {
    const aggregated = aggregatedMap()
    for (const [apiVersion, resource] of [
      ['v1', 'pods'],
      ['v1', 'pods/status'],
      ['apps/v1', 'deployments'],
      ['apps/v1', 'deployments/scale'],
    ] as const) {
      const a = aggregated.lookupResource(apiVersion, resource)
      const b = map.lookupResource(apiVersion, resource)
      assert.deepEqual(b?.ref, a?.ref, `${apiVersion} ${resource}`)
      assert.equal(b?.kind, a?.kind, `${apiVersion} ${resource}`)
      assert.deepEqual(b?.subresources, a?.subresources, `${apiVersion} ${resource}`)
    }
  })
})

describe('ResourceMap.hasSameResources', () => {
  it('ignores order and freshness but sees a new kind', () => {
    const a = aggregatedMap()
    const reversed = new ResourceMap([...a.groups()].reverse())
    assert.ok(a.hasSameResources(reversed))
    const stale = new ResourceMap(
      a.groups().map((group) => ({
        ...group,
        versions: group.versions.map((gv) => ({
          ...gv,
          freshness: 'Stale' as const,
          staleReason: 'down',
        })),
      }))
    )
    assert.ok(a.hasSameResources(stale))
    assert.deepEqual(stale.staleGroupVersions(), [
      'v1',
      'apps/v1',
      'autoscaling/v2',
      'autoscaling/v1',
      'example.metacontroller-ts.dev/v1',
    ])
    assert.deepEqual(a.staleGroupVersions(), [])
    const withoutCrd = new ResourceMap(
      a.groups().filter((g) => g.name !== 'example.metacontroller-ts.dev')
    )
    assert.ok(!a.hasSameResources(withoutCrd))
    assert.ok(ResourceMap.empty.hasSameResources(new ResourceMap([])))
  })
})

describe('apiVersion helpers', () => {
  it('parses and formats core and named groups', () => {
    assert.deepEqual(parseApiVersion('v1'), { group: '', version: 'v1' })
    assert.deepEqual(parseApiVersion('apps/v1'), { group: 'apps', version: 'v1' })
    assert.equal(parseApiVersion(''), undefined)
    assert.equal(parseApiVersion('/v1'), undefined)
    assert.equal(parseApiVersion('apps/'), undefined)
    assert.equal(parseApiVersion('a/b/c'), undefined)
    assert.equal(formatApiVersion('', 'v1'), 'v1')
    assert.equal(formatApiVersion('apps', 'v1'), 'apps/v1')
  })
})
