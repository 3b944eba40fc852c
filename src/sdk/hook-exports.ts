/**
 * Which exports of a hook module serve which controller, by the controller's `metadata.name`:
 * the export named after it in camelCase (`web-policy` → `webPolicy`), an object of `sync` and
 * optionally `finalize` and `customize`; failing that, the module's top-level `sync`, `finalize`
 * and `customize` exports. One module can so serve a CompositeController and a
 * DecoratorController side by side. `metactl dev` and `metactl render --hook-module` both look
 * hooks up here.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'

/** A hook module without the hooks a controller needs, naming the export to add. */
export class HookExportError extends Error {
  override readonly name = 'HookExportError'
}

/** The hook functions of one controller, as its module exports them. */
export interface ControllerHookFunctions {
  readonly sync: (...args: never[]) => unknown
  readonly finalize?: (...args: never[]) => unknown
  readonly customize?: (...args: never[]) => unknown
  /** Where they were found, for messages: `webPolicy` or `sync`. */
  readonly from: string
}

/** The export that holds a controller's hooks: its name in camelCase. */
export function hookExportName(controllerName: string): string {
  return controllerName
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part, index) =>
      index === 0
        ? part.charAt(0).toLowerCase() + part.slice(1)
        : part.charAt(0).toUpperCase() + part.slice(1)
    )
    .join('')
}

type HookFunction = (...args: never[]) => unknown

function functionAt(
  source: Readonly<Record<string, unknown>>,
  key: string
): HookFunction | undefined {
  const value = source[key]
  return typeof value === 'function' ? (value as HookFunction) : undefined
}

/** The hooks of an object export (`{ sync, finalize?, customize? }`); undefined without `sync`. */
export function hooksIn(
  source: Readonly<Record<string, unknown>>,
  from: string
): ControllerHookFunctions | undefined {
  const sync = functionAt(source, 'sync')
  if (sync === undefined) return undefined
  const finalize = functionAt(source, 'finalize')
  const customize = functionAt(source, 'customize')
  return {
    sync,
    ...(finalize === undefined ? {} : { finalize }),
    ...(customize === undefined ? {} : { customize }),
    from,
  }
}

/**
 * The hooks of each controller, by its name.
 *
 * @throws HookExportError naming the export to add when a controller has none.
 */
export function controllerHooks(
  exports: Readonly<Record<string, unknown>>,
  controllers: readonly KubeObject[],
  moduleShown: string
): Map<string, ControllerHookFunctions> {
  const hooks = new Map<string, ControllerHookFunctions>()
  for (const controller of controllers) {
    const name = controller.metadata.name ?? ''
    const exportName = hookExportName(name)
    const own = exports[exportName]
    if (own !== undefined) {
      const found =
        typeof own === 'object' && own !== null
          ? hooksIn(own as Record<string, unknown>, exportName)
          : undefined
      if (found === undefined) {
        throw new HookExportError(
          `${moduleShown}: export ${exportName} (the hooks of ${controller.kind} ${name}) ` +
            'must be an object with a sync function, e.g. export const ' +
            `${exportName} = { sync }`
        )
      }
      hooks.set(name, found)
      continue
    }
    const shared = hooksIn(exports, 'sync')
    if (shared === undefined) {
      const found = Object.keys(exports).join(', ') || 'none'
      throw new HookExportError(
        `${moduleShown} has no hooks for ${controller.kind} ${name}: export ` +
          `${exportName} = { sync } (or a top-level sync for every controller); exports: ${found}`
      )
    }
    hooks.set(name, shared)
  }
  return hooks
}
