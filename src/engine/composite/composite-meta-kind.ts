/**
 * CompositeController objects at the meta level: how one becomes a running hosted controller.
 *
 * @module
 */
import { parseCompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { COMPOSITE_CONTROLLERS } from '../../kube/well-known-resources.js'
import type { CompositeControllerDefinition } from '../engine-context.js'
import { webhookCompositeHooks } from '../hooks/webhook-hooks.js'
import type { MetaKind } from '../meta/meta-controller.js'
import { webhookOptionsFor } from '../meta/webhook-options.js'
import { startCompositeController } from './start-composite-controller.js'

/** Serves CompositeController objects: webhook hooks, started by {@link startCompositeController}. */
export const compositeMetaKind: MetaKind<CompositeControllerDefinition> = {
  kind: 'CompositeController',
  resource: COMPOSITE_CONTROLLERS,
  async define(name, object, context, credentials) {
    const spec = parseCompositeControllerSpec(object['spec'])
    return {
      name,
      controller: { ...object, status: object['status'] ?? {} },
      spec,
      hooks: await webhookCompositeHooks(
        spec,
        webhookOptionsFor(context, name, 'CompositeController', credentials)
      ),
      finalizerEnabled: spec.hooks.finalize !== undefined,
    }
  },
  start: startCompositeController,
}
