// Edge cases of the discovery parsers: odd servers must not crash a refresh.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  discoveryDocumentKind,
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  parseApiVersions,
} from './parse-discovery.js'

describe('discoveryDocumentKind', () => {
  it('reads kind, and falls back to the shape when kind is missing', () => {
    assert.equal(discoveryDocumentKind({ kind: 'APIGroupDiscoveryList' }), 'APIGroupDiscoveryList')
    assert.equal(discoveryDocumentKind({ kind: 'APIVersions', versions: [] }), 'APIVersions')
    assert.equal(discoveryDocumentKind({ groups: [] }), 'APIGroupList')
    assert.equal(discoveryDocumentKind({ resources: [] }), 'APIResourceList')
    assert.equal(discoveryDocumentKind({ versions: ['v1'] }), 'APIVersions')
    assert.equal(discoveryDocumentKind({ kind: 'Status', status: 'Failure' }), undefined)
    assert.equal(discoveryDocumentKind('<html>'), undefined)
    assert.equal(discoveryDocumentKind(null), undefined)
  })
})

describe('parseAggregatedDiscovery', () => {
  it('skips malformed entries and keeps the rest', () => {
    const groups = parseAggregatedDiscovery({
      kind: 'APIGroupDiscoveryList',
      items: [
        'not an object',
        {
          metadata: { name: 'odd.example.com' },
          versions: [
            { version: 7 },
            {
              version: 'v1',
              freshness: 'Stale',
              resources: [
                { responseKind: { kind: 'NoName' } },
                { resource: 'a/b', responseKind: { kind: 'Slash' } },
                {
                  resource: 'things',
                  scope: 'Cluster',
                  verbs: ['get', 3, null],
                  shortNames: 'th',
                  subresources: [{ verbs: ['get'] }, { subresource: 'status', verbs: 'get' }],
                },
              ],
            },
          ],
        },
      ],
    })
    assert.equal(groups.length, 1)
    const [group] = groups
    assert.equal(group?.name, 'odd.example.com')
    assert.equal(group.versions.length, 1)
    const version = group.versions[0]
    assert.equal(version?.freshness, 'Stale')
    assert.deepEqual(version.resources, [
      {
        resource: 'things',
        responseKind: undefined,
        namespaced: false,
        singularName: '',
        verbs: ['get'],
        shortNames: [],
        categories: [],
        subresources: [{ name: 'status', responseKind: undefined, verbs: [] }],
      },
    ])
  })

  it('returns nothing for a body that is not a list', () => {
    assert.deepEqual(parseAggregatedDiscovery(undefined), [])
    assert.deepEqual(parseAggregatedDiscovery({ items: 'x' }), [])
  })

  it('names the core group with an empty string', () => {
    const [core] = parseAggregatedDiscovery({ items: [{ metadata: {}, versions: [] }] })
    assert.equal(core?.name, '')
  })
})

describe('legacy parsers', () => {
  it('reads versions from version or groupVersion', () => {
    assert.deepEqual(parseApiVersions({ versions: ['v1', '', 2] }), ['v1'])
    assert.deepEqual(
      parseApiGroupList({
        groups: [
          { name: 'a', versions: [{ groupVersion: 'a/v2' }, { version: 'v1' }, 'junk'] },
          { name: '', versions: [{ version: 'v1' }] },
          { versions: [] },
        ],
      }),
      [{ name: 'a', versions: ['v2', 'v1'], preferredVersion: undefined }]
    )
  })

  it('inherits group and version of the list for kinds that name none', () => {
    const [resource] = parseApiResourceList(
      { resources: [{ name: 'widgets', namespaced: true, kind: 'Widget', verbs: ['get'] }] },
      'example.com',
      'v1'
    )
    assert.deepEqual(resource?.responseKind, {
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
    })
    assert.deepEqual(parseApiResourceList('nope', 'a', 'v1'), [])
  })

  it('gives a subresource without a kind its parent kind', () => {
    const [resource] = parseApiResourceList(
      {
        resources: [
          { name: 'widgets', namespaced: true, kind: 'Widget' },
          { name: 'widgets/status', namespaced: true, kind: '' },
          { name: 'widgets/', namespaced: true, kind: 'X' },
        ],
      },
      'example.com',
      'v1'
    )
    assert.deepEqual(resource?.subresources, [
      {
        name: 'status',
        responseKind: { group: 'example.com', version: 'v1', kind: 'Widget' },
        verbs: [],
      },
    ])
  })
})
