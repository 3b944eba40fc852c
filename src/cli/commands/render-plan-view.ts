/**
 * The parts of the engine's child plan that `render`'s written output and `--diff` read, as a
 * structural type, so that these files depend on the plan's shape and not on where the engine
 * keeps its planner.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'

/** One planned step: a child type (`Kind.apiVersion`) and key (`namespace/name`). */
interface Step {
  readonly type: string
  readonly key: string
}

/** What `render-written.ts` and `render-diff.ts` read of a plan. */
export interface PlanView {
  readonly create: readonly (Step & { readonly object: KubeObject })[]
  readonly update: readonly (Step & {
    readonly object: KubeObject
    readonly observed: KubeObject
  })[]
  readonly recreate: readonly (Step & { readonly object: KubeObject })[]
  readonly delete: readonly (Step & { readonly object: KubeObject })[]
  readonly unchanged: readonly (Step & { readonly object: KubeObject })[]
  readonly skipped: readonly (Step & { readonly object: KubeObject; readonly desired: boolean })[]
}
