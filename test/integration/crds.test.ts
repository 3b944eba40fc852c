// Proves deploy/crds against a real kube-apiserver: the three Metacontroller CRDs install and become
// Established with upstream's names, scopes and short names; upstream-style CompositeController and
// DecoratorController manifests are accepted unchanged, keep every field and come back with the
// CRD defaults filled in; invalid values are refused with the field and the allowed values; and
// `kubectl apply -k deploy/crds` works. Runs against the plane that scripts/run-tests.mjs starts
// (or the cluster in KUBECONFIG with METACTL_USE_EXISTING_CLUSTER=1).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { isJsonObject } from '../../src/core/kube-object.js'
import type { JsonObject, KubeObject } from '../../src/core/kube-object.js'
import { InvalidError, NotFoundError } from '../../src/kube/api-error.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { CRD_RESOURCE, readManifestFile, startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { COMPOSITE_CONTROLLERS, NAMESPACES } from '../../src/kube/well-known-resources.js'

const run = promisify(execFile)

const CRD_FILES = [
  'deploy/crds/compositecontrollers.yaml',
  'deploy/crds/decoratorcontrollers.yaml',
  'deploy/crds/controllerrevisions.yaml',
]
const GROUP = 'metacontroller.k8s.io'
const DECORATOR_CONTROLLERS: ResourceRef = {
  group: GROUP,
  version: 'v1alpha1',
  resource: 'decoratorcontrollers',
  namespaced: false,
}
const CONTROLLER_REVISIONS: ResourceRef = {
  group: GROUP,
  version: 'v1alpha1',
  resource: 'controllerrevisions',
  namespaced: true,
}

/** The CRD fields this test reads back. */
interface Crd extends KubeObject {
  spec: {
    group: string
    scope: string
    names: { kind: string; plural: string; singular: string; shortNames?: string[] }
    versions: {
      name: string
      served: boolean
      storage: boolean
      subresources?: JsonObject
      additionalPrinterColumns?: unknown[]
      schema: { openAPIV3Schema: JsonObject }
    }[]
  }
  status?: { conditions?: { type: string; status: string }[] }
}

function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`
}

/** Follows `path` through nested objects; fails the test when a step is not an object. */
function dig(value: unknown, ...path: string[]): JsonObject {
  let current = value
  for (const key of path) {
    assert.ok(isJsonObject(current), `expected an object before "${key}" in ${path.join('.')}`)
    current = current[key]
  }
  assert.ok(isJsonObject(current), `expected an object at ${path.join('.')}`)
  return current
}

/** Asserts that a dry-run create is refused as Invalid, with a message matching every pattern. */
async function assertRefused(
  plane: ControlPlane,
  ref: ResourceRef,
  object: KubeObject,
  patterns: readonly RegExp[]
): Promise<void> {
  await assert.rejects(plane.client.create(ref, object, { dryRun: true }), (error: unknown) => {
    assert.ok(error instanceof InvalidError, `expected InvalidError, got ${String(error)}`)
    for (const pattern of patterns) assert.match(error.message, pattern)
    return true
  })
}

/** The upstream PodService tutorial's CompositeController, as a user would write it. */
function podServiceManifest(name: string): string {
  return `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata:
  name: ${name}
spec:
  generateSelector: true
  parentResource:
    apiVersion: homelabz.com.br/v1
    resource: podservices
  childResources:
    - apiVersion: v1
      resource: pods
      updateStrategy:
        method: Recreate
    - apiVersion: v1
      resource: services
      updateStrategy:
        method: InPlace
  hooks:
    sync:
      webhook:
        url: http://podservice-controller.metacontroller/sync
`
}

function compositeController(name: string, spec: JsonObject): KubeObject {
  return { apiVersion: `${GROUP}/v1alpha1`, kind: 'CompositeController', metadata: { name }, spec }
}

function decoratorController(name: string, spec: JsonObject): KubeObject {
  return { apiVersion: `${GROUP}/v1alpha1`, kind: 'DecoratorController', metadata: { name }, spec }
}

const MINIMAL_CC_SPEC: JsonObject = {
  parentResource: { apiVersion: 'example.com/v1', resource: 'things' },
  hooks: { sync: { webhook: { url: 'http://things.example/sync' } } },
}

describe('Metacontroller CRDs (deploy/crds)', () => {
  let plane: ControlPlane
  let namespace: string
  let kubectlCache: string
  const compositeNames: string[] = []
  const decoratorNames: string[] = []

  function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run('kubectl', [
      '--kubeconfig',
      plane.kubeconfigPath,
      '--cache-dir',
      kubectlCache,
      ...args,
    ])
  }

  before(async () => {
    plane = await startControlPlane({ crds: CRD_FILES })
    kubectlCache = mkdtempSync(join(tmpdir(), 'crds-test-kubectl-'))
    namespace = uniqueName('crds-test')
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    const deletes = [
      ...compositeNames.map((name) => plane.client.delete(COMPOSITE_CONTROLLERS, name)),
      ...decoratorNames.map((name) => plane.client.delete(DECORATOR_CONTROLLERS, name)),
      plane.client.delete(NAMESPACES, namespace),
    ]
    const results = await Promise.allSettled(deletes)
    rmSync(kubectlCache, { recursive: true, force: true })
    await plane.stop()
    for (const result of results) {
      if (result.status === 'rejected' && !(result.reason instanceof NotFoundError)) {
        throw result.reason
      }
    }
  })

  it('installs three Established CRDs with upstream names, scopes and short names', async () => {
    const expected = [
      {
        plural: 'compositecontrollers',
        kind: 'CompositeController',
        singular: 'compositecontroller',
        scope: 'Cluster',
        shortNames: ['cc', 'cctl'],
      },
      {
        plural: 'decoratorcontrollers',
        kind: 'DecoratorController',
        singular: 'decoratorcontroller',
        scope: 'Cluster',
        shortNames: ['dec', 'decorators'],
      },
      {
        plural: 'controllerrevisions',
        kind: 'ControllerRevision',
        singular: 'controllerrevision',
        scope: 'Namespaced',
        shortNames: undefined,
      },
    ]
    for (const want of expected) {
      const crd = await plane.client.get<Crd>(CRD_RESOURCE, `${want.plural}.${GROUP}`)
      assert.equal(crd.spec.group, GROUP)
      assert.equal(crd.spec.scope, want.scope, `${want.plural} scope`)
      assert.equal(crd.spec.names.kind, want.kind)
      assert.equal(crd.spec.names.plural, want.plural)
      assert.equal(crd.spec.names.singular, want.singular)
      assert.deepEqual(crd.spec.names.shortNames, want.shortNames, `${want.plural} shortNames`)
      assert.equal(
        crd.metadata.annotations?.['api-approved.kubernetes.io'],
        'unapproved, request not yet submitted'
      )
      assert.equal(crd.spec.versions.length, 1)
      const [version] = crd.spec.versions
      assert.ok(version)
      assert.equal(version.name, 'v1alpha1')
      assert.equal(version.served, true)
      assert.equal(version.storage, true)
      assert.deepEqual(version.subresources, { status: {} })
      // Upstream defines no printer columns.
      assert.equal(version.additionalPrinterColumns, undefined)
      const conditions = crd.status?.conditions ?? []
      assert.ok(
        conditions.some((c) => c.type === 'Established' && c.status === 'True'),
        `${want.plural} conditions: ${JSON.stringify(conditions)}`
      )
      assert.ok(
        conditions.some((c) => c.type === 'NamesAccepted' && c.status === 'True'),
        `${want.plural} conditions: ${JSON.stringify(conditions)}`
      )
    }
  })

  it('keeps one identical copy of each repeated schema (hooks, webhook, endpointConfigs)', () => {
    const [ccCrd, dcCrd] = CRD_FILES.map((file) => {
      const [crd] = readManifestFile(file)
      assert.ok(crd)
      return crd
    })
    const schemaOf = (crd: KubeObject | undefined): JsonObject => {
      const versions = dig(crd, 'spec')['versions']
      assert.ok(Array.isArray(versions))
      return dig(versions[0], 'schema', 'openAPIV3Schema')
    }
    const ccSpec = dig(schemaOf(ccCrd), 'properties', 'spec', 'properties')
    const dcSpec = dig(schemaOf(dcCrd), 'properties', 'spec', 'properties')
    const ccHooks = dig(ccSpec, 'hooks', 'properties')
    const dcHooks = dig(dcSpec, 'hooks', 'properties')
    assert.deepEqual(Object.keys(ccHooks).sort(), [
      'customize',
      'finalize',
      'postUpdateChild',
      'preUpdateChild',
      'sync',
    ])
    assert.deepEqual(Object.keys(dcHooks).sort(), ['customize', 'finalize', 'sync'])
    const hookProps = (hook: unknown): JsonObject => dig(hook, 'properties')
    const reference = hookProps(ccHooks['sync'])
    for (const [name, hook] of [...Object.entries(ccHooks), ...Object.entries(dcHooks)]) {
      assert.deepEqual(hookProps(hook), reference, `hooks.${name} differs from hooks.sync`)
    }
    assert.deepEqual(ccSpec['endpointConfigs'], dcSpec['endpointConfigs'])
    const webhook = dig(reference, 'webhook', 'properties')
    const endpoint = dig(ccSpec, 'endpointConfigs', 'items', 'properties')
    for (const key of ['caBundle', 'clientTLS', 'authorization', 'basicAuth']) {
      assert.deepEqual(endpoint[key], webhook[key], `endpointConfigs[].${key} differs from webhook`)
    }
    assert.deepEqual(
      dig(ccSpec, 'parentResource', 'properties', 'labelSelector', 'properties'),
      dig(dcSpec, 'resources', 'items', 'properties', 'labelSelector', 'properties')
    )
  })

  it('accepts the upstream PodService CompositeController unchanged and fills in defaults', async () => {
    const name = uniqueName('podservice-controller')
    compositeNames.push(name)
    const file = join(kubectlCache, `${name}.yaml`)
    writeFileSync(file, podServiceManifest(name))
    const { stdout } = await kubectl('apply', '-f', file)
    assert.match(stdout, new RegExp(`compositecontroller\\.${GROUP}/${name} created`))

    const stored = await plane.client.get(COMPOSITE_CONTROLLERS, name)
    assert.deepEqual(stored['spec'], {
      generateSelector: true,
      parentResource: { apiVersion: 'homelabz.com.br/v1', resource: 'podservices' },
      childResources: [
        { apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'Recreate' } },
        { apiVersion: 'v1', resource: 'services', updateStrategy: { method: 'InPlace' } },
      ],
      hooks: {
        sync: {
          version: 'v1',
          webhook: { url: 'http://podservice-controller.metacontroller/sync' },
        },
      },
    })

    // The short names resolve through discovery, and the status subresource is served.
    const listed = await kubectl('get', 'cc', name, '-o', 'name')
    assert.equal(listed.stdout.trim(), `compositecontroller.${GROUP}/${name}`)
    const cctl = await kubectl('get', 'cctl', name, '-o', 'jsonpath={.spec.hooks.sync.version}')
    assert.equal(cctl.stdout, 'v1')
    await plane.client.updateStatus(COMPOSITE_CONTROLLERS, { ...stored, status: {} })
  })

  it('keeps every CompositeController field and materialises every CRD default', async () => {
    const name = uniqueName('cc-all-fields')
    compositeNames.push(name)
    const tls = {
      caBundle: { secretRef: { name: 'hook-tls', namespace: 'hooks' } },
      clientTLS: { secretRef: { name: 'client-tls', namespace: 'hooks' } },
      authorization: { secretRef: { name: 'token', namespace: 'hooks', key: 'token' } },
    }
    const tlsDefaults = {
      caBundle: { secretRef: { name: 'hook-tls', namespace: 'hooks', key: 'ca.crt' } },
      clientTLS: {
        secretRef: { name: 'client-tls', namespace: 'hooks' },
        certKey: 'tls.crt',
        privateKeyKey: 'tls.key',
      },
      authorization: {
        type: 'Bearer',
        secretRef: { name: 'token', namespace: 'hooks', key: 'token' },
      },
    }
    const spec = {
      parentResource: {
        apiVersion: 'example.com/v1',
        resource: 'widgets',
        revisionHistory: { fieldPaths: ['spec.template', 'spec.replicas'] },
        labelSelector: {
          matchLabels: { tier: 'web' },
          matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }],
        },
        ignoreStatusChanges: true,
      },
      childResources: [
        {
          apiVersion: 'apps/v1',
          resource: 'statefulsets',
          updateStrategy: {
            method: 'RollingRecreate',
            statusChecks: {
              conditions: [
                { type: 'Ready', status: 'True', reason: 'AllGood' },
                { type: 'Synced' },
              ],
            },
          },
        },
        { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'RollingInPlace' } },
        { apiVersion: 'v1', resource: 'secrets', updateStrategy: { method: 'OnDelete' } },
        { apiVersion: 'v1', resource: 'services' },
      ],
      hooks: {
        sync: {
          version: 'v2',
          webhook: {
            url: 'https://widgets.hooks:8443/sync',
            timeout: '1m30s',
            responseUnMarshallMode: 'strict',
            etag: { enabled: true, cacheTimeoutSeconds: 60, cacheCleanupSeconds: 300 },
            ...tls,
          },
        },
        finalize: {
          webhook: {
            service: { name: 'widgets', namespace: 'hooks', port: 8080, protocol: 'https' },
            path: '/finalize',
            caBundle: { configMapRef: { name: 'hook-ca', namespace: 'hooks', key: 'bundle.pem' } },
            basicAuth: { secretRef: { name: 'basic', namespace: 'hooks' } },
          },
        },
        customize: {
          webhook: {
            url: 'http://widgets.hooks/customize',
            responseUnMarshallMode: 'loose',
            caBundle: { inline: '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n' },
          },
        },
        preUpdateChild: { webhook: { url: 'http://widgets.hooks/pre' } },
        postUpdateChild: { version: 'v1', webhook: { url: 'http://widgets.hooks/post' } },
      },
      endpointConfigs: [
        { host: 'widgets.hooks:8443', ...tls },
        {
          host: 'other.hooks',
          caBundle: { configMapRef: { name: 'other-ca', namespace: 'hooks' } },
          basicAuth: {
            secretRef: { name: 'basic', namespace: 'hooks' },
            usernameKey: 'user',
            passwordKey: 'pass',
          },
        },
      ],
      resyncPeriodSeconds: 30,
      generateSelector: false,
    }
    await plane.client.create(COMPOSITE_CONTROLLERS, compositeController(name, spec))
    const stored = await plane.client.get(COMPOSITE_CONTROLLERS, name)
    assert.deepEqual(stored['spec'], {
      ...spec,
      hooks: {
        sync: {
          version: 'v2',
          webhook: { ...spec.hooks.sync.webhook, ...tlsDefaults },
        },
        finalize: {
          version: 'v1',
          webhook: {
            ...spec.hooks.finalize.webhook,
            basicAuth: {
              secretRef: { name: 'basic', namespace: 'hooks' },
              usernameKey: 'username',
              passwordKey: 'password',
            },
          },
        },
        customize: { version: 'v1', webhook: spec.hooks.customize.webhook },
        preUpdateChild: { version: 'v1', webhook: { url: 'http://widgets.hooks/pre' } },
        postUpdateChild: { version: 'v1', webhook: { url: 'http://widgets.hooks/post' } },
      },
      endpointConfigs: [
        { host: 'widgets.hooks:8443', ...tlsDefaults },
        {
          ...spec.endpointConfigs[1],
          caBundle: { configMapRef: { name: 'other-ca', namespace: 'hooks', key: 'ca.crt' } },
        },
      ],
    })
  })

  it('accepts an upstream service-per-pod style DecoratorController with defaults', async () => {
    const name = uniqueName('service-per-pod')
    decoratorNames.push(name)
    const webhook = (path: string): JsonObject => ({
      service: { name: 'service-per-pod', namespace: 'metacontroller', port: 80 },
      path,
      timeout: '10s',
    })
    const spec = {
      resources: [
        {
          apiVersion: 'apps/v1',
          resource: 'statefulsets',
          annotationSelector: {
            matchExpressions: [
              { key: 'service-per-pod-label', operator: 'Exists' },
              { key: 'service-per-pod-ports', operator: 'Exists' },
            ],
          },
        },
        {
          apiVersion: 'v1',
          resource: 'pods',
          labelSelector: { matchLabels: { app: 'web' } },
          annotationSelector: { matchAnnotations: { 'pod-name-label': 'true' } },
          ignoreStatusChanges: true,
        },
      ],
      attachments: [
        { apiVersion: 'v1', resource: 'services', updateStrategy: { method: 'InPlace' } },
        { apiVersion: 'v1', resource: 'configmaps' },
      ],
      hooks: {
        sync: { webhook: webhook('/sync-service-per-pod') },
        finalize: { webhook: webhook('/finalize-service-per-pod') },
        customize: { version: 'v2', webhook: { url: 'http://service-per-pod.metacontroller/c' } },
      },
      endpointConfigs: [
        {
          host: 'service-per-pod.metacontroller',
          authorization: { type: 'Token', secretRef: { name: 't', namespace: 'm', key: 'k' } },
        },
      ],
      resyncPeriodSeconds: 60,
    }
    await plane.client.create(DECORATOR_CONTROLLERS, decoratorController(name, spec))
    const stored = await plane.client.get(DECORATOR_CONTROLLERS, name)
    assert.deepEqual(stored['spec'], {
      ...spec,
      hooks: {
        sync: { version: 'v1', webhook: webhook('/sync-service-per-pod') },
        finalize: { version: 'v1', webhook: webhook('/finalize-service-per-pod') },
        customize: spec.hooks.customize,
      },
    })
    const listed = await kubectl('get', 'dec', name, '-o', 'name')
    assert.equal(listed.stdout.trim(), `decoratorcontroller.${GROUP}/${name}`)
    const decorators = await kubectl('get', 'decorators', name, '-o', 'name')
    assert.equal(decorators.stdout.trim(), `decoratorcontroller.${GROUP}/${name}`)
  })

  it('refuses an unknown update method and hook version, naming the field and allowed values', async () => {
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      compositeController(uniqueName('bad-method'), {
        ...MINIMAL_CC_SPEC,
        childResources: [
          { apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'Sometimes' } },
        ],
      }),
      [
        /spec\.childResources\[0\]\.updateStrategy\.method: Unsupported value: "Sometimes"/,
        /supported values: "OnDelete", "Recreate", "InPlace", "RollingRecreate", "RollingInPlace"/,
      ]
    )
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      compositeController(uniqueName('bad-version'), {
        ...MINIMAL_CC_SPEC,
        hooks: { sync: { version: 'v3', webhook: { url: 'http://things.example/sync' } } },
      }),
      [/spec\.hooks\.sync\.version: Unsupported value: "v3": supported values: "v1", "v2"/]
    )
    await assertRefused(
      plane,
      DECORATOR_CONTROLLERS,
      decoratorController(uniqueName('bad-attachment'), {
        resources: [{ apiVersion: 'v1', resource: 'pods' }],
        attachments: [
          { apiVersion: 'v1', resource: 'services', updateStrategy: { method: 'Sometimes' } },
        ],
      }),
      [/spec\.attachments\[0\]\.updateStrategy\.method: Unsupported value: "Sometimes"/]
    )
  })

  it('refuses other invalid values: duration, unmarshall mode, required fields', async () => {
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      compositeController(uniqueName('bad-webhook'), {
        ...MINIMAL_CC_SPEC,
        hooks: {
          sync: {
            webhook: { url: 'http://x/sync', timeout: 'soon', responseUnMarshallMode: 'lax' },
          },
        },
      }),
      [
        /spec\.hooks\.sync\.webhook\.timeout: Invalid value: "soon"/,
        /must be of type duration/,
        /spec\.hooks\.sync\.webhook\.responseUnMarshallMode: Unsupported value: "lax"/,
      ]
    )
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      compositeController(uniqueName('bad-required'), {
        parentResource: { apiVersion: 'example.com/v1' },
        childResources: [{ resource: 'pods' }],
        hooks: {
          sync: {
            webhook: {
              service: { name: 'only-name' },
              authorization: { secretRef: { name: 's', namespace: 'n' } },
            },
          },
        },
        endpointConfigs: [{ caBundle: { inline: 'pem' } }],
      }),
      [
        /spec\.parentResource\.resource: Required value/,
        /spec\.childResources\[0\]\.apiVersion: Required value/,
        /spec\.hooks\.sync\.webhook\.service\.namespace: Required value/,
        /spec\.hooks\.sync\.webhook\.authorization\.secretRef\.key: Required value/,
        /spec\.endpointConfigs\[0\]\.host: Required value/,
      ]
    )
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      { apiVersion: `${GROUP}/v1alpha1`, kind: 'CompositeController', metadata: { name: 'x' } },
      [/spec: Required value/]
    )
    await assertRefused(
      plane,
      DECORATOR_CONTROLLERS,
      decoratorController(uniqueName('no-resources'), { hooks: {} }),
      [/spec\.resources: Required value/]
    )
    await assertRefused(
      plane,
      COMPOSITE_CONTROLLERS,
      compositeController(uniqueName('bad-types'), {
        ...MINIMAL_CC_SPEC,
        generateSelector: 'yes',
        resyncPeriodSeconds: 4294967296,
      }),
      [/spec\.generateSelector: Invalid value: "string"/, /spec\.resyncPeriodSeconds/]
    )
  })

  it('accepts a ControllerRevision with an arbitrary parentPatch and children', async () => {
    const name = uniqueName('widget-rev')
    const parentPatch = {
      spec: {
        template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c' }] } },
        replicas: 3,
        anything: [1, 'two', { three: true }, null],
      },
    }
    const children = [
      { apiGroup: '', kind: 'Pod', names: ['w-0', 'w-1'] },
      { apiGroup: 'apps', kind: 'StatefulSet', names: [] },
    ]
    await plane.client.create(CONTROLLER_REVISIONS, {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'ControllerRevision',
      metadata: { name, namespace, labels: { 'controller-uid': 'abc' } },
      parentPatch,
      children,
    })
    const stored = await plane.client.get(CONTROLLER_REVISIONS, name, { namespace })
    assert.deepEqual(stored['parentPatch'], parentPatch)
    assert.deepEqual(stored['children'], children)

    await assertRefused(
      plane,
      CONTROLLER_REVISIONS,
      {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'ControllerRevision',
        metadata: { name: uniqueName('bad-rev'), namespace },
        children: [{ apiGroup: '', kind: 'Pod' }],
      },
      [/parentPatch: Required value/, /children\[0\]\.names: Required value/]
    )
    await plane.client.delete(CONTROLLER_REVISIONS, name, { namespace })
  })

  it('applies with kubectl apply -k deploy/crds (server dry run)', async () => {
    const { stdout } = await kubectl('apply', '--dry-run=server', '-k', 'deploy/crds')
    for (const plural of ['compositecontrollers', 'decoratorcontrollers', 'controllerrevisions']) {
      assert.match(
        stdout,
        new RegExp(`customresourcedefinition\\.apiextensions\\.k8s\\.io/${plural}\\.${GROUP} \\w+`)
      )
    }
    assert.match(stdout, /server dry run/)
  })
})
