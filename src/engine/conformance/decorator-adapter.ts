/**
 * The DecoratorController's {@link KindAdapter}: targets (`widgets.example.com`) with ConfigMap
 * attachments, in scope by the resource rule's label selector.
 *
 * @module
 */
import { compileLabelSelector } from '../../core/label-selector.js'
import {
  DECORATOR_CONTROLLER_ANNOTATION,
  decoratorFinalizer,
} from '../../api/decorator-controller-spec.js'
import type {
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  HookFunction,
} from '../../api/hook-model.js'
import { gvkKey } from '../../api/hook-model.js'
import { decoratorKind } from '../decorator/decorator-kind.js'
import type { ConformanceHook, KindAdapter } from './conformance-harness.js'
import { kindHook } from './kind-hook.js'
import { CONFIGMAPS, CONFORMANCE_NAME, WIDGETS } from './conformance-resources.js'

const NAME = CONFORMANCE_NAME
const TARGET = WIDGETS
const ATTACHMENT = CONFIGMAPS
const ATTACHMENT_TYPE = gvkKey(ATTACHMENT.apiVersion, ATTACHMENT.kind)

/** Wraps a kind-neutral hook as a decorator sync or finalize hook (labels and annotations kept). */
function decoratorHook(
  hook: ConformanceHook
): HookFunction<DecoratorSyncRequest, DecoratorSyncResponse> {
  return kindHook<DecoratorSyncRequest, DecoratorSyncResponse>(
    hook,
    (request) => ({
      subject: request.object,
      observed: request.attachments,
      finalizing: request.finalizing,
    }),
    (answer) => ({
      labels: {},
      annotations: {},
      // A decorator's null status leaves the target's status alone.
      status: answer.status ?? null,
      attachments: answer.desired,
      resyncAfterMs: answer.resyncAfterMs ?? 0,
      finalized: answer.finalized ?? false,
    })
  )
}

/** Builds the DecoratorController adapter for the conformance suite. */
export function decoratorAdapter(): KindAdapter {
  return {
    name: 'DecoratorController',
    subject: TARGET,
    child: ATTACHMENT,
    finalizer: decoratorFinalizer(NAME),
    // Decorator keys name the resource rule first: rule 0 is the only one here.
    queueKey: (namespace, name) => `0:${namespace}/${name}`,
    subjectObject: (name, namespace, labels) => ({
      apiVersion: TARGET.apiVersion,
      kind: TARGET.kind,
      metadata: { name, namespace, labels },
      spec: {},
    }),
    desiredChild: (_target, name, data) => ({
      apiVersion: ATTACHMENT.apiVersion,
      kind: ATTACHMENT.kind,
      // Unlabelled: a decorator has no selector over its attachments.
      metadata: { name },
      data,
    }),
    undeclaredChild: (_target, name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name } }),
    kind: (build) => {
      const matches = compileLabelSelector(build.subjectSelector)
      return decoratorKind({
        writes: { client: build.client },
        controller: {
          name: NAME,
          object: {
            apiVersion: 'metacontroller.k8s.io/v1alpha1',
            kind: 'DecoratorController',
            metadata: { name: NAME },
            status: {},
          },
          hooks: {
            sync: decoratorHook(build.sync),
            ...(build.finalize === undefined ? {} : { finalize: decoratorHook(build.finalize) }),
          },
          finalizer: decoratorFinalizer(NAME),
          finalizerEnabled: build.finalize !== undefined,
          attachments: {
            types: new Map([
              [ATTACHMENT_TYPE, { ref: ATTACHMENT.ref, updateMethod: build.updateMethod }],
            ]),
            declaredTypes: new Set([ATTACHMENT_TYPE]),
            namespaced: new Map([[ATTACHMENT_TYPE, true]]),
            injectLabels: {},
            injectAnnotations: { [DECORATOR_CONTROLLER_ANNOTATION]: NAME },
            matchesSelector: () => true,
          },
        },
        rules: [
          {
            info: TARGET,
            matches: (target) => matches(target.metadata.labels ?? {}),
            ignoreStatusChanges: false,
            related: undefined,
          },
        ],
        resyncPeriodMs: build.resyncPeriodMs,
        events: build.events,
        log: build.log,
      })
    },
  }
}
