/**
 * Names what RBAC refuses the engine: every 403 the API server answers is turned into the right
 * that was missing and the controllers whose spec needs it, then reported once per window as a
 * Warning `Forbidden` event on each such CompositeController or DecoratorController, one log
 * line, and the counter `metacontroller_forbidden_requests_total{controller,verb,group,resource}`.
 *
 * @remarks
 * One ServiceAccount serves every controller, so a right it lacks is lacking for every controller
 * whose computed rules (`controllerRbacRules`, what `metactl rbac` prints) contain it: those are
 * the controllers named. A request no controller's spec explains (a customize hook's related
 * resource, the engine's own) is counted and logged with `controller=""`. Informers retry a
 * forbidden list every 30 s at most, writes on every sync: reports are deduplicated per
 * controller and right for {@link ForbiddenRequestsOptions.repeatAfterMs} (10 min), the counter
 * counts every request.
 *
 * The lists and watches forbidden within {@link FORBIDDEN_FRESH_MS} are what readiness leaves out
 * (see `Engine.notReady`): a controller lacking a right does not take the others' readiness down.
 *
 * @module
 */
import { rbacControllerOf, controllerRbacRules } from '../../api/controller-rbac-rules.js'
import type { KubeObject } from '../../core/kube-object.js'
import type { RequestObserver } from '../../kube/kube-transport.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { Counter } from '../../runtime/metrics/prom-client-core.js'
import type { Registry } from '../../runtime/metrics/prom-client-core.js'
import type { EventSink } from '../events/event-recorder.js'
import { collectionOf, describeRight, rightOfRequest, rulesGrant } from './forbidden-right.js'
import type { RequestRight } from './forbidden-right.js'

/** How long a forbidden list or watch counts as current: three of the informers' longest backoffs. */
export const FORBIDDEN_FRESH_MS = 90_000

type CounterLabels = 'controller' | 'verb' | 'group' | 'resource'

const counters = new WeakMap<Registry, Counter<CounterLabels>>()

function forbiddenCounter(registry: Registry): Counter<CounterLabels> {
  let counter = counters.get(registry)
  if (counter === undefined) {
    counter = new Counter({
      name: 'metacontroller_forbidden_requests_total',
      help: 'Requests the API server refused with 403 Forbidden, by the controller whose spec needs the right ("" when none does) and the right.',
      labelNames: ['controller', 'verb', 'group', 'resource'],
      registers: [registry],
    })
    counters.set(registry, counter)
  }
  return counter
}

/** Options of {@link ForbiddenRequests}. */
export interface ForbiddenRequestsOptions {
  readonly log: Logger
  readonly registry?: Registry
  /** How long one controller's report of one right is not repeated (10 min). */
  readonly repeatAfterMs?: number
  readonly now?: () => number
}

/** Where the controllers and the event sink come from, bound once the engine has them. */
export interface ForbiddenRequestsBinding {
  readonly events: EventSink
  /** The CompositeController and DecoratorController objects the engine serves. */
  readonly controllers: () => readonly KubeObject[]
}

/** A collection whose list or watch is forbidden, and the controllers that need it. */
export interface ForbiddenCollection {
  /** The informer description of the collection (`pods.v1`). */
  readonly collection: string
  readonly right: RequestRight
  readonly controllers: readonly string[]
}

/** The engine's own collections: without them nothing is served, so they always count. */
function isEngineOwn(right: RequestRight): boolean {
  return (
    right.group === 'metacontroller.k8s.io' &&
    (right.resource === 'compositecontrollers' || right.resource === 'decoratorcontrollers')
  )
}

/** Turns 403 answers into named reports; an observer of the engine's transports. */
export class ForbiddenRequests implements RequestObserver {
  readonly #log: Logger
  readonly #counter: Counter<CounterLabels> | undefined
  readonly #repeatAfterMs: number
  readonly #now: () => number
  #binding: ForbiddenRequestsBinding | undefined
  readonly #reported = new Map<string, number>()
  readonly #collections = new Map<string, { at: number; value: ForbiddenCollection }>()

  constructor(options: ForbiddenRequestsOptions) {
    this.#log = options.log
    this.#counter = options.registry === undefined ? undefined : forbiddenCounter(options.registry)
    this.#repeatAfterMs = options.repeatAfterMs ?? 10 * 60_000
    this.#now = options.now ?? Date.now
  }

  /** Gives the reporter its event sink and controllers (the engine builds them later). */
  bind(binding: ForbiddenRequestsBinding): void {
    this.#binding = binding
  }

  /** {@link RequestObserver}: reports every 403. */
  onRequest(info: {
    readonly method: string
    readonly path: string
    readonly statusCode?: number | undefined
  }): void {
    if (info.statusCode !== 403) return
    const right = rightOfRequest(info.method, info.path)
    if (right !== undefined) this.report(right)
  }

  /** Counts one forbidden request of `right` and reports it unless reported lately. */
  report(right: RequestRight): void {
    const controllers = this.#controllersNeeding(right)
    const names = controllers.map((c) => c.metadata.name ?? '')
    for (const name of names.length === 0 ? [''] : names) {
      this.#counter?.inc({
        controller: name,
        verb: right.verb,
        group: right.group,
        resource: right.resource,
      })
    }
    if ((right.verb === 'list' || right.verb === 'watch') && !isEngineOwn(right)) {
      const collection = collectionOf(right)
      this.#collections.set(collection, {
        at: this.#now(),
        value: { collection, right, controllers: names },
      })
    }
    const described = describeRight(right)
    if (names.length === 0) {
      if (this.#fresh(`|${described}`))
        this.#log.warn('request forbidden', {
          controller: '',
          right: described,
          hint: "no controller spec names it: a customize hook's related resource, or the engine's own role",
        })
      return
    }
    for (const controller of controllers) {
      const name = controller.metadata.name ?? ''
      if (!this.#fresh(`${name}|${described}`)) continue
      this.#log.warn('request forbidden', {
        controller: name,
        kind: controller.kind,
        right: described,
        hint: `grant it: metactl rbac -f <the ${controller.kind}>`,
      })
      // An event about a refused event write would be refused too.
      if (right.resource !== 'events')
        this.#binding?.events.record(
          controller,
          'Warning',
          'Forbidden',
          `The engine may not ${described}: controller ${name} needs it (metactl rbac prints its ClusterRole)`
        )
    }
  }

  /** Lists and watches forbidden lately, the engine's own collections left out. */
  forbiddenCollections(): ForbiddenCollection[] {
    const since = this.#now() - FORBIDDEN_FRESH_MS
    return [...this.#collections.values()].filter((c) => c.at >= since).map((c) => c.value)
  }

  #fresh(key: string): boolean {
    const now = this.#now()
    const last = this.#reported.get(key)
    if (last !== undefined && now - last < this.#repeatAfterMs) return false
    this.#reported.set(key, now)
    return true
  }

  #controllersNeeding(right: RequestRight): KubeObject[] {
    return (this.#binding?.controllers() ?? []).filter((object) => {
      try {
        const controller = rbacControllerOf(object)
        return controller !== undefined && rulesGrant(controllerRbacRules(controller), right)
      } catch {
        // A spec the engine refuses runs nothing, so it sends no request.
        return false
      }
    })
  }
}
