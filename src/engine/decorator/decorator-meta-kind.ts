/**
 * DecoratorController objects at the meta level: how one becomes a running hosted controller.
 *
 * @module
 */
import { parseDecoratorControllerSpec } from '../../api/decorator-controller-spec.js'
import { DECORATOR_CONTROLLERS } from '../../kube/well-known-resources.js'
import type { DecoratorControllerDefinition } from '../engine-context.js'
import { webhookDecoratorHooks } from '../hooks/webhook-hooks.js'
import type { MetaKind } from '../meta/meta-controller.js'
import { webhookOptionsFor } from '../meta/webhook-options.js'
import { startDecoratorController } from './start-decorator-controller.js'

/** Serves DecoratorController objects: webhook hooks, started by {@link startDecoratorController}. */
export const decoratorMetaKind: MetaKind<DecoratorControllerDefinition> = {
  kind: 'DecoratorController',
  resource: DECORATOR_CONTROLLERS,
  async define(name, object, context, credentials) {
    const spec = parseDecoratorControllerSpec(object['spec'])
    return {
      name,
      controller: { ...object, status: object['status'] ?? {} },
      spec,
      hooks: await webhookDecoratorHooks(
        spec,
        webhookOptionsFor(context, name, 'DecoratorController', credentials)
      ),
      finalizerEnabled: spec.hooks.finalize !== undefined,
    }
  },
  start: startDecoratorController,
}
