/**
 * The CompositeController's {@link KindAdapter}: parents (`widgets.example.com`) with
 * ConfigMap children, selected either by the parent's `spec.selector` or by `generateSelector`.
 *
 * @module
 */
import { parseCompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  HookFunction,
} from '../../api/hook-model.js'
import { compositeFinalizer, compositeKind } from '../composite/composite-kind.js'
import type { ConformanceHook, KindAdapter, KindBuildOptions } from './conformance-harness.js'
import { kindHook } from './kind-hook.js'
import { CONFIGMAPS, CONFORMANCE_NAME, WIDGETS } from './conformance-resources.js'

/** Options of {@link compositeAdapter}. */
export interface CompositeAdapterOptions {
  /** Select children by a generated `controller-uid` label instead of `spec.selector`. */
  readonly generateSelector: boolean
}

const NAME = CONFORMANCE_NAME
const PARENT = WIDGETS
const CHILD = CONFIGMAPS

/** Wraps a kind-neutral hook as a composite sync or finalize hook. */
function compositeHook(
  hook: ConformanceHook
): HookFunction<CompositeSyncRequest, CompositeSyncResponse> {
  return kindHook<CompositeSyncRequest, CompositeSyncResponse>(
    hook,
    (request) => ({
      subject: request.parent,
      observed: request.children,
      finalizing: request.finalizing,
    }),
    (answer) => ({
      status: answer.status ?? null,
      children: answer.desired,
      resyncAfterMs: answer.resyncAfterMs ?? 0,
      finalized: answer.finalized ?? false,
    })
  )
}

/** The spec as a user would write it, parsed as the engine parses in-process controllers. */
function compositeSpec(generateSelector: boolean, options: KindBuildOptions) {
  const spec = parseCompositeControllerSpec({
    generateSelector,
    parentResource: {
      apiVersion: PARENT.apiVersion,
      resource: PARENT.ref.resource,
      ...(options.subjectSelector === undefined ? {} : { labelSelector: options.subjectSelector }),
    },
    childResources: [
      {
        apiVersion: CHILD.apiVersion,
        resource: CHILD.ref.resource,
        updateStrategy: { method: options.updateMethod },
      },
    ],
    hooks: { sync: {}, ...(options.finalize === undefined ? {} : { finalize: {} }) },
  })
  // Set after parsing: the parser clamps resyncPeriodSeconds to 1 s, too slow for a unit test.
  return { ...spec, resyncPeriodMs: options.resyncPeriodMs }
}

/** Builds the CompositeController adapter for the conformance suite. */
export function compositeAdapter(options: CompositeAdapterOptions): KindAdapter {
  const { generateSelector } = options
  return {
    name: `CompositeController (${generateSelector ? 'generateSelector' : 'spec.selector'})`,
    subject: PARENT,
    child: CHILD,
    finalizer: compositeFinalizer(NAME),
    queueKey: (namespace, name) => `${namespace}/${name}`,
    subjectObject: (name, namespace, labels) => ({
      apiVersion: PARENT.apiVersion,
      kind: PARENT.kind,
      metadata: { name, namespace, labels },
      spec: generateSelector ? {} : { selector: { matchLabels: { widget: name } } },
    }),
    desiredChild: (subject, name, data) => ({
      apiVersion: CHILD.apiVersion,
      kind: CHILD.kind,
      // Under generateSelector the engine injects the controller-uid label itself.
      metadata: { name, labels: generateSelector ? {} : { widget: subject.metadata.name ?? '' } },
      data,
    }),
    undeclaredChild: (subject, name) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, labels: { widget: subject.metadata.name ?? '' } },
    }),
    kind: (build) =>
      compositeKind({
        name: NAME,
        controller: {
          apiVersion: 'metacontroller.k8s.io/v1alpha1',
          kind: 'CompositeController',
          metadata: { name: NAME },
          status: {},
        },
        spec: compositeSpec(generateSelector, build),
        parent: PARENT,
        children: [{ info: CHILD, updateMethod: build.updateMethod }],
        hooks: {
          sync: compositeHook(build.sync),
          ...(build.finalize === undefined ? {} : { finalize: compositeHook(build.finalize) }),
        },
        finalizerEnabled: build.finalize !== undefined,
        revisionNamespace: 'default',
        client: build.client,
        informers: build.informers,
        discovery: {
          resolveResource: () => Promise.reject(new Error('no discovery in the in-memory tier')),
        },
        events: build.events,
        log: build.log,
      }),
  }
}
