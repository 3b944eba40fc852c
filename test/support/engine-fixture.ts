// The integration fixture for engine tests, modelled on upstream's framework/fixture.go: one
// control plane per test file (attached to the tier's shared one), a namespace per test, test
// CRDs, hooks served from this process over HTTP, and an engine running in-process.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { KubeObject } from '../../src/core/kube-object.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../../src/kube/dynamic-client.js'
import { Engine } from '../../src/engine/engine.js'
import type { EngineOptions } from '../../src/engine/engine.js'
import { createLogger } from '../../src/runtime/diagnostics/logger.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane, WaitForOptions } from '../../src/testing/index.js'
import {
  COMPOSITE_CONTROLLERS as CCS,
  DECORATOR_CONTROLLERS as DCS,
  EVENTS,
  NAMESPACES,
} from '../../src/kube/well-known-resources.js'
export {
  COMPOSITE_CONTROLLERS as CCS,
  DECORATOR_CONTROLLERS as DCS,
  EVENTS,
  NAMESPACES,
} from '../../src/kube/well-known-resources.js'

export const METACONTROLLER_CRDS = [
  'deploy/crds/compositecontrollers.yaml',
  'deploy/crds/decoratorcontrollers.yaml',
  'deploy/crds/controllerrevisions.yaml',
]

/** A test CRD in group `test.metacontroller-ts.dev`, like upstream's `CreateCRD(kind, scope)`. */
export function testCrd(
  kind: string,
  options: { namespaced?: boolean; status?: boolean } = {}
): {
  crd: KubeObject
  ref: ResourceRef
  apiVersion: string
} {
  const plural = `${kind.toLowerCase()}s`
  const group = 'test.metacontroller-ts.dev'
  const namespaced = options.namespaced ?? true
  return {
    apiVersion: `${group}/v1`,
    ref: { group, version: 'v1', resource: plural, namespaced },
    crd: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: namespaced ? 'Namespaced' : 'Cluster',
        names: { plural, singular: kind.toLowerCase(), kind },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            ...(options.status === false ? {} : { subresources: { status: {} } }),
            schema: {
              openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        ],
      },
    },
  }
}

/** Label that scopes each test's controllers to that test's parents (they share parent CRDs). */
export const TEST_LABEL = 'metactl-test'

/**
 * A parent and a child test CRD, with builders for parents and CompositeController specs that
 * keep each test's controllers on its own parents: every controller of a file watches the same
 * parent CRD, so without the label they would all sync (and fight over) every parent.
 */
export function isolatedComposite(parentKind: string, childKind: string) {
  const parentCrd = testCrd(parentKind)
  const childCrd = testCrd(childKind)
  return {
    parentCrd,
    childCrd,
    /** A parent in `namespace`, labelled for that test, selecting children labelled `app: name`. */
    parentObject: (
      name: string,
      namespace: string,
      spec: Record<string, unknown> = {}
    ): KubeObject => ({
      apiVersion: parentCrd.apiVersion,
      kind: parentKind,
      metadata: { name, namespace, labels: { [TEST_LABEL]: namespace } },
      spec: { selector: { matchLabels: { app: name } }, ...spec },
    }),
    /** A CompositeController spec serving only the parents of the test in `ns`. */
    ccSpec: (
      url: string,
      ns: string,
      extra: Record<string, unknown> = {}
    ): Record<string, unknown> => ({
      parentResource: {
        apiVersion: parentCrd.apiVersion,
        resource: parentCrd.ref.resource,
        labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
      },
      childResources: [{ apiVersion: childCrd.apiVersion, resource: childCrd.ref.resource }],
      hooks: { sync: { webhook: { url } } },
      ...extra,
    }),
  }
}

/**
 * A target and an attachment test CRD, with builders for targets and DecoratorController specs
 * that keep each test's controllers on its own targets (the same label scheme as
 * {@link isolatedComposite}: a DecoratorController of the test in `ns` selects targets labelled
 * `metactl-test: ns`).
 */
export function isolatedDecorator(targetKind: string, attachmentKind: string) {
  const targetCrd = testCrd(targetKind)
  const attachmentCrd = testCrd(attachmentKind)
  return {
    targetCrd,
    attachmentCrd,
    /** A target in `namespace`, labelled for that test. */
    targetObject: (
      name: string,
      namespace: string,
      extra: { spec?: Record<string, unknown>; annotations?: Record<string, string> } = {}
    ): KubeObject => ({
      apiVersion: targetCrd.apiVersion,
      kind: targetKind,
      metadata: {
        name,
        namespace,
        labels: { [TEST_LABEL]: namespace },
        ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
      },
      spec: extra.spec ?? {},
    }),
    /** An attachment of the attachment CRD (namespace defaulted by the engine). */
    attachmentObject: (name: string, data: Record<string, unknown> = {}): KubeObject => ({
      apiVersion: attachmentCrd.apiVersion,
      kind: attachmentKind,
      metadata: { name },
      data,
    }),
    /** A DecoratorController spec serving only the targets of the test in `ns`. */
    dcSpec: (
      url: string,
      ns: string,
      extra: Record<string, unknown> = {}
    ): Record<string, unknown> => ({
      resources: [
        {
          apiVersion: targetCrd.apiVersion,
          resource: targetCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
      ],
      attachments: [{ apiVersion: attachmentCrd.apiVersion, resource: attachmentCrd.ref.resource }],
      hooks: { sync: { webhook: { url } } },
      ...extra,
    }),
  }
}

/** A hook served over HTTP by this process. */
export interface ServedHook {
  readonly url: string
  /** Every request body received, in order. */
  readonly requests: unknown[]
  close(): Promise<void>
}

/** Serves a JSON hook on 127.0.0.1 (405 for non-POST, 500 when the handler throws, like upstream's). */
export async function serveHook(
  handler: (body: unknown) => unknown,
  options: { status?: () => number } = {}
): Promise<ServedHook> {
  const requests: unknown[] = []
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end()
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const reply = async (): Promise<void> => {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        requests.push(body)
        const status = options.status?.() ?? 200
        const out: unknown = await handler(body)
        const text = typeof out === 'string' ? out : JSON.stringify(out)
        res.writeHead(status, { 'content-type': 'application/json' }).end(text)
      }
      reply().catch((error: unknown) => {
        res.writeHead(500).end(error instanceof Error ? error.message : String(error))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/sync`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

/** One test file's world: the control plane, an engine, and cleanup. */
export class EngineFixture {
  readonly plane: ControlPlane
  readonly engine: Engine
  readonly #cleanups: (() => Promise<unknown>)[] = []

  private constructor(plane: ControlPlane, engine: Engine) {
    this.plane = plane
    this.engine = engine
  }

  /** Starts (or attaches to) the control plane, installs the Metacontroller CRDs, starts an engine. */
  static async start(options: EngineOptions = {}): Promise<EngineFixture> {
    const plane = await startControlPlane({ crds: METACONTROLLER_CRDS })
    const engine = new Engine(plane.config, {
      discoveryIntervalMs: 500,
      log: createLogger({ level: process.env['METACTL_TEST_LOG'] === '1' ? 'debug' : 'error' }),
      ...options,
    })
    await engine.start()
    return new EngineFixture(plane, engine)
  }

  get client(): DynamicClient {
    return this.plane.client
  }

  /** Creates a namespace deleted at teardown. */
  async namespace(prefix = 'mc'): Promise<string> {
    const name = `${prefix}-${randomBytes(3).toString('hex')}`
    await this.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    })
    this.#cleanups.push(() => this.client.delete(NAMESPACES, name).catch(() => undefined))
    return name
  }

  /** Installs test CRDs (kept after the run; other files may share them). */
  async crds(...crds: KubeObject[]): Promise<void> {
    await this.plane.installCrds(crds)
  }

  /** Registers a cleanup run at teardown, last registered first. */
  onTeardown(cleanup: () => Promise<unknown>): void {
    this.#cleanups.push(cleanup)
  }

  /** Serves a hook until teardown. */
  async hook(
    handler: (body: unknown) => unknown,
    options: { status?: () => number } = {}
  ): Promise<ServedHook> {
    const served = await serveHook(handler, options)
    this.onTeardown(() => served.close())
    return served
  }

  /** Creates a CompositeController deleted at teardown. */
  async compositeController(
    name: string,
    spec: Record<string, unknown>,
    labels?: Record<string, string>
  ): Promise<KubeObject> {
    const created = await this.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name, ...(labels === undefined ? {} : { labels }) },
      spec: { resyncPeriodSeconds: 3600, ...spec },
    })
    this.onTeardown(() => this.client.delete(CCS, name).catch(() => undefined))
    return created
  }

  /** Creates a DecoratorController deleted at teardown. */
  async decoratorController(
    name: string,
    spec: Record<string, unknown>,
    labels?: Record<string, string>
  ): Promise<KubeObject> {
    const created = await this.client.create(DCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name, ...(labels === undefined ? {} : { labels }) },
      spec: { resyncPeriodSeconds: 3600, ...spec },
    })
    this.onTeardown(() => this.client.delete(DCS, name).catch(() => undefined))
    return created
  }

  /** Waits for an object to exist and satisfy `check`. */
  waitForObject(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    check: (o: KubeObject) => boolean = () => true,
    options: WaitForOptions = {}
  ): Promise<KubeObject> {
    return waitFor(
      async () => {
        const o = await this.client.get(ref, name, namespace === undefined ? {} : { namespace })
        return check(o) ? o : undefined
      },
      { timeoutMs: 30_000, intervalMs: 250, description: `${ref.resource} ${name}`, ...options }
    )
  }

  /** Waits until an object is gone. */
  waitForGone(ref: ResourceRef, name: string, namespace?: string): Promise<true> {
    return waitFor(
      async () => {
        try {
          await this.client.get(ref, name, namespace === undefined ? {} : { namespace })
          return false
        } catch (error) {
          if (error instanceof NotFoundError) return true
          throw error
        }
      },
      { timeoutMs: 30_000, intervalMs: 250, description: `${ref.resource} ${name} to be deleted` }
    )
  }

  /** Waits for an Event with `reason` in a namespace whose message contains `text`. */
  waitForEvent(
    namespace: string,
    reason: string,
    text = '',
    involvedName?: string
  ): Promise<KubeObject> {
    return waitFor(
      async () => {
        const list = await this.client.list(EVENTS, { namespace })
        return list.items.find(
          (e) =>
            e['reason'] === reason &&
            String(e['message']).includes(text) &&
            (involvedName === undefined ||
              (e['involvedObject'] as { name?: string } | undefined)?.name === involvedName)
        )
      },
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        description: `a ${reason} event containing "${text}" in ${namespace}`,
      }
    )
  }

  /** Stops the engine and runs the cleanups. */
  async stop(): Promise<void> {
    await this.engine.stop()
    for (const cleanup of this.#cleanups.reverse()) await cleanup()
    await this.plane.stop()
  }
}
