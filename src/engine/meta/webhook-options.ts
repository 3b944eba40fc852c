/**
 * The engine settings every cluster-defined controller's webhooks are built with.
 *
 * @module
 */
import type { EngineContext } from '../engine-context.js'
import type { CredentialReader } from '../hooks/webhook-credentials.js'
import type { BuildWebhooksOptions } from '../hooks/webhook-hooks.js'
import { hookMetricsFor } from '../metrics/hook-metrics.js'

/**
 * The options both controller kinds pass to their webhook builders: one place, so an engine-wide
 * hook setting (metrics, response limit, address overrides, the cap on calls in flight) reaches both kinds alike.
 */
export function webhookOptionsFor(
  context: EngineContext,
  controllerName: string,
  controllerType: 'CompositeController' | 'DecoratorController',
  credentials: CredentialReader
): BuildWebhooksOptions {
  return {
    log: context.log.child({ controller: controllerName }),
    credentials,
    controllerName,
    controllerType,
    ...(context.metrics === undefined ? {} : { metrics: hookMetricsFor(context.metrics.registry) }),
    ...(context.hookResponseLimitBytes === undefined
      ? {}
      : { maxResponseBytes: context.hookResponseLimitBytes }),
    ...(context.hookAddresses === undefined ? {} : { addresses: context.hookAddresses }),
    ...(context.hookProxy === undefined ? {} : { proxy: context.hookProxy.resolve }),
    ...(context.hookMaxInFlight === undefined ? {} : { maxInFlight: context.hookMaxInFlight }),
  }
}
