// The authoring tools against the engine on the real control plane, for every controller shape
// (the e2e half of src/cli/commands/authoring-matrix.test.ts): a namespaced and a cluster-scoped
// custom parent, a cluster-scoped (Namespace) and a namespaced (Service) built-in one, under a
// CompositeController and a DecoratorController each, through all four authoring tools:
// - serveHooks: `metactl run` calls one serveHooks server (every CRD given as `parentCrd`, so each
//   route checks its own kind's schema), and what it applied is the engine's answer;
// - the callHook helpers and `metactl render` (metactl dev's hook lookup and in-process adapter)
//   must give that answer for the live parent the API server returned;
// - `metactl dev`, the real CLI over a project holding the eight controllers and their hooks: once
//   the engine's controllers are gone and what they wrote is undone, dev must write it again,
//   field for field (the children's names, namespaces, labels, annotations, ownerReferences and
//   data, a CompositeController's status, a DecoratorController's labels on its target), and
//   find no right missing in the roles `metactl rbac` computed for them.
// The fixtures (shapes, controllers, the one hook) are test/support/authoring-matrix-fixtures.ts.
//
// The plane is this test's own: its controllers sync every Namespace and Service of the cluster.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { callCompositeHook, callDecoratorHook, serveHooks } from 'metacontroller-ts'
import type { KubeObject } from 'metacontroller-ts'
import { CONFIGMAPS, NAMESPACES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { metacontrollerCrdFiles, startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import {
  childKeyOf,
  controllerName,
  controllerOf,
  KINDS,
  MATRIX_NAMESPACES,
  matrixAnswer,
  matrixHookModule,
  SHAPES,
  TENANT_CRD,
  THING_CRD,
} from '../support/authoring-matrix-fixtures.js'
import type { Kind, Shape } from '../support/authoring-matrix-fixtures.js'
import { linkProjectModules, startDev } from '../support/dev-process.js'
import type { DevProcess } from '../support/dev-process.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true }
const COMPOSITES: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'compositecontrollers',
  namespaced: false,
}
const DECORATORS: ResourceRef = { ...COMPOSITES, resource: 'decoratorcontrollers' }
const childRef = (kind: Kind): ResourceRef =>
  kind === 'CompositeController' ? CONFIGMAPS : SECRETS
const cells = KINDS.flatMap((kind) => SHAPES.map((shape) => ({ kind, shape })))

/** What a controller wrote for one cell: its child, and its parent's fields it sets. */
interface CellWrites {
  readonly child: KubeObject
  /** A CompositeController's status, a DecoratorController's label on its target. */
  readonly parent: unknown
}

/** The fields of a child that matter: identity, labels, annotations, owners, content. */
function childFields(child: KubeObject): Record<string, unknown> {
  const { name, namespace, labels, annotations, ownerReferences } = child.metadata
  return {
    apiVersion: child.apiVersion,
    kind: child.kind,
    metadata: { name, namespace, labels, annotations, ownerReferences },
    data: child['data'],
    ...(child['type'] === undefined ? {} : { type: child['type'] }),
  }
}

const decoratedLabel = (kind: Kind, shape: Shape): string =>
  `matrix.example.com/${controllerName(kind, shape)}`

/** The parent's fields the cell's controller writes. */
function parentFields(kind: Kind, shape: Shape, parent: KubeObject): unknown {
  if (kind === 'CompositeController') return parent['status']
  return parent.metadata.labels?.[decoratedLabel(kind, shape)]
}

describe('the authoring tools agree with the engine on every controller shape', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-matrix-e2e-'))
  const engineWrites = new Map<string, CellWrites>()
  let plane: ControlPlane
  let engine: SpawnedEngine | undefined
  let closeHooks: (() => Promise<void>) | undefined
  let hookUrl = ''

  before(async () => {
    plane = await startControlPlane({
      useExistingCluster: false,
      nodes: 0,
      crds: [...metacontrollerCrdFiles(), THING_CRD, TENANT_CRD],
    })
    const { client } = plane
    for (const name of MATRIX_NAMESPACES) {
      await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })
    }
    for (const shape of SHAPES) {
      if (shape.create === undefined) continue
      const metadata = {
        ...shape.create.metadata,
        ...(shape.namespace ? { namespace: shape.namespace } : {}),
      }
      await client.create(shape.resource, { ...shape.create, metadata })
    }
    const routes: Record<string, (request: never) => unknown> = {}
    for (const { kind, shape } of cells) {
      const name = controllerName(kind, shape)
      routes[`/${name}`] = (request: { parent?: KubeObject; object?: KubeObject }) =>
        matrixAnswer(name, request)
    }
    const server = await serveHooks(routes, {
      port: 0,
      parentCrd: [THING_CRD, TENANT_CRD],
      log: () => undefined,
    })
    closeHooks = () => server.close()
    hookUrl = server.url
    engine = spawnEngine(plane.kubeconfigPath, ['--workers', '4'])
  })

  after(async () => {
    engine?.kill()
    await closeHooks?.()
    await plane.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The live parent, as the API server gives it to the engine. */
  async function liveParent(shape: Shape): Promise<KubeObject> {
    return plane.client.get(shape.resource, shape.parentName, {
      ...(shape.namespace === undefined ? {} : { namespace: shape.namespace }),
    })
  }

  /** The cell's child and parent fields, once its controller has written both. */
  async function cellWrites(kind: Kind, shape: Shape): Promise<CellWrites> {
    return waitFor(
      async () => {
        const parent = await liveParent(shape)
        const { namespace, name } = childKeyOf(kind, shape, parent)
        const child = await plane.client.get(childRef(kind), name, { namespace })
        const fields = parentFields(kind, shape, parent)
        return fields === undefined ? undefined : { child, parent: fields }
      },
      { timeoutMs: 60_000, description: `${controllerName(kind, shape)}'s child and parent` }
    )
  }

  // One kind at a time: the engine's cells check each kind alone; dev's below run both together.
  for (const kind of KINDS) {
    describe(kind, () => {
      const resource = kind === 'CompositeController' ? COMPOSITES : DECORATORS
      before(async () => {
        for (const shape of SHAPES) {
          const name = controllerName(kind, shape)
          await plane.client.create(resource, controllerOf(kind, shape, `${hookUrl}/${name}`))
        }
      })
      after(async () => {
        for (const shape of SHAPES) await plane.client.delete(resource, controllerName(kind, shape))
      })
      for (const shape of SHAPES) {
        it(`${kind} over a ${shape.name}: serveHooks, the callHook helper and render give the engine's answer`, async () => {
          const parent = await liveParent(shape)
          // serveHooks: the engine called it and applied what it answered.
          const written = await cellWrites(kind, shape)
          const owner = written.child.metadata.ownerReferences?.find(
            (o) => o.uid === parent.metadata.uid
          )
          assert.ok(owner, `the child is owned by ${parent.kind} ${parent.metadata.name}`)
          engineWrites.set(controllerName(kind, shape), written)
          const key = childKeyOf(kind, shape, parent)
          const engineKey = `${key.namespace}/${key.name}`

          const name = controllerName(kind, shape)
          const controller = controllerOf(kind, shape, 'http://hooks.example/sync')
          const helperChildren =
            kind === 'CompositeController'
              ? (
                  await callCompositeHook((request) => matrixAnswer(name, request), {
                    parent,
                    controller,
                    ...(shape.crd ? { parentCrd: shape.crd } : {}),
                  })
                ).children
              : (
                  await callDecoratorHook((request) => matrixAnswer(name, request), {
                    object: parent,
                    controller,
                    ...(shape.crd ? { objectCrd: shape.crd } : {}),
                  })
                ).attachments
          const helperKeys = helperChildren.map(
            (c) =>
              `${c.metadata?.namespace ?? parent.metadata.namespace ?? ''}/${c.metadata?.name ?? ''}`
          )
          assert.deepEqual(helperKeys, [engineKey])

          const files = {
            controller: join(dir, `${name}.yaml`),
            parent: join(dir, `${name}-parent.yaml`),
            crd: join(dir, `${name}-crd.yaml`),
            hooks: join(dir, `${name}.mjs`),
          }
          writeFileSync(files.controller, stringify(controller))
          writeFileSync(files.parent, stringify(parent))
          if (shape.crd !== undefined) writeFileSync(files.crd, stringify(shape.crd))
          writeFileSync(files.hooks, matrixHookModule([name]))
          const rendered = await metactl([
            'render',
            '--controller',
            files.controller,
            '--parent',
            files.parent,
            '--hook-module',
            files.hooks,
            ...(shape.crd === undefined ? [] : ['--crd', files.crd]),
            '--output',
            'json',
          ])
          assert.equal(rendered.code, 0, rendered.stderr)
          const plan = (JSON.parse(rendered.stdout) as { plan: { create: { key: string }[] } }).plan
          assert.deepEqual(
            plan.create.map((e) => e.key),
            [engineKey]
          )
        })
      }
    })
  }

  describe('metactl dev', () => {
    const project = join(dir, 'matrix-project')
    let dev: DevProcess | undefined

    /** Undoes what the engine wrote for every cell, so that only dev can write it again. */
    async function undoEngineWrites(): Promise<void> {
      for (const { kind, shape } of cells) {
        const parent = await liveParent(shape)
        const { namespace, name } = childKeyOf(kind, shape, parent)
        await plane.client.delete(childRef(kind), name, { namespace }).catch(() => undefined)
        if (kind === 'DecoratorController') {
          const labels = Object.fromEntries(
            Object.entries(parent.metadata.labels ?? {}).filter(
              ([label]) => label !== decoratedLabel(kind, shape)
            )
          )
          await plane.client.update(shape.resource, {
            ...parent,
            metadata: { ...parent.metadata, labels },
          })
        } else if (shape.crd !== undefined) {
          await plane.client.updateStatus(shape.resource, { ...parent, status: {} })
        }
      }
    }

    before(async () => {
      await undoEngineWrites()
      mkdirSync(join(project, 'deploy'), { recursive: true })
      mkdirSync(join(project, 'src'))
      linkProjectModules(project)
      writeFileSync(join(project, 'package.json'), '{ "name": "matrix", "type": "module" }\n')
      writeFileSync(
        join(project, 'deploy', 'crds.yaml'),
        [THING_CRD, TENANT_CRD].map((crd) => stringify(crd)).join('---\n')
      )
      const controllers = cells.map(({ kind, shape }) =>
        controllerOf(kind, shape, 'http://unused.invalid/sync')
      )
      writeFileSync(
        join(project, 'deploy', 'controllers.yaml'),
        controllers.map((c) => stringify(c)).join('---\n')
      )
      const names = cells.map(({ kind, shape }) => controllerName(kind, shape))
      writeFileSync(join(project, 'src', 'hooks.mjs'), matrixHookModule(names))
      const roles = await metactl(['rbac', '-f', join(project, 'deploy', 'controllers.yaml')])
      assert.equal(roles.code, 0, roles.stderr)
      writeFileSync(join(project, 'deploy', 'rbac.yaml'), roles.stdout)
      dev = startDev(project, ['--kubeconfig', plane.kubeconfigPath, '--hooks', 'src/hooks.mjs'])
      await dev.line(/^dev: serving /, 'metactl dev to start')
    })

    it('finds no right missing in the roles metactl rbac computed, for any shape or kind', () => {
      // The rights check runs before dev says it is serving.
      assert.deepEqual(
        dev
          ?.output()
          .split('\n')
          .filter((l) => l.includes('warning:')),
        []
      )
    })

    after(async () => {
      // Ctrl-C or SIGTERM stops the engine and exits cleanly.
      if (dev !== undefined) assert.deepEqual(await dev.stop(), [0, null])
    })

    for (const { kind, shape } of cells) {
      it(`${kind} over a ${shape.name}: metactl dev writes the engine's children and parent fields`, async () => {
        const name = controllerName(kind, shape)
        const expected = engineWrites.get(name)
        assert.ok(expected, `the engine's cell of ${name} ran first and recorded what it wrote`)
        const parent = await liveParent(shape)
        const key = childKeyOf(kind, shape, parent)
        // dev's words: a namespaced parent and its children by name, the others' with namespace.
        const namespace = parent.metadata.namespace
        const where = namespace === undefined ? '' : `${namespace}/`
        const shownChild = namespace === undefined ? `${key.namespace}/${key.name}` : key.name
        await dev?.line(
          new RegExp(
            `^\\S+ \\[${name}\\] sync ${parent.kind} ${where}${shape.parentName}: created 1 \\(${key.kind} ${shownChild}\\)`
          ),
          `dev's sync line of ${name}`
        )
        await waitFor(
          async () => {
            const { child, parent: fields } = await cellWrites(kind, shape)
            assert.deepEqual(
              { child: childFields(child), parent: fields },
              { child: childFields(expected.child), parent: expected.parent }
            )
            return true
          },
          { timeoutMs: 30_000, description: `${name}: dev's writes equal to the engine's` }
        )
      })
    }
  })
})
