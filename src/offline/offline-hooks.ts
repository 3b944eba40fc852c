/**
 * The hooks an offline sync (`metactl render`) gives the engine's pipeline, the same for both
 * controller kinds: the controller's webhooks, built by the engine's own builder and pointed at
 * `--hook-url`, or SDK hooks imported from `--hook-module`, looked up as `metactl dev` looks them
 * up (`sdk/hook-exports.ts`), and run through the SDK's in-process adapter.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../api/composite-controller-spec.js'
import type { SyncHooks } from '../api/controller-hooks.js'
import type { ControllerHooks, HookSpec } from '../api/controller-spec-fields.js'
import type { CustomizeRequest, CustomizeResponse, HookFunction } from '../api/hook-model.js'
import type { KubeObject } from '../core/kube-object.js'
import type { BuildWebhooksOptions } from '../engine/hooks/webhook-hooks.js'
import { silentLogger } from '../runtime/diagnostics/logger.js'
import type { Logger } from '../runtime/diagnostics/logger.js'
import { controllerHooks, HookExportError, hooksIn } from '../sdk/hook-exports.js'
import type { ControllerHookFunctions } from '../sdk/hook-exports.js'
import { inProcessHooksOf } from '../sdk/in-process.js'
import { OfflineError } from './offline-error.js'
import { messageOf } from '../core/message-of.js'

/** What picks the hook of an offline sync: a URL or a module, and whether the parent is finalizing. */
export interface OfflineHookOptions {
  readonly hookUrl?: string
  readonly hookModule?: string
  readonly finalizing?: boolean
}

/** A customize hook in the engine's model. */
export type OfflineCustomize = HookFunction<CustomizeRequest, CustomizeResponse>

/** The hooks of one render, and what to call them in messages. */
export interface OfflineHooks<Request, Response> {
  readonly description: string
  readonly hooks: SyncHooks<Request, Response>
  /** The module's customize hook, called offline over the `--related` objects. */
  readonly customize: OfflineCustomize | undefined
  close(): Promise<void>
}

/** How one controller kind's hooks are built. */
export interface OfflineHookKind<Request, Response> {
  /** The controller, whose `metadata.name` names its hooks' export in a module. */
  readonly controller: KubeObject
  /** The engine's webhook builder of the kind, for these hook settings. */
  webhooks(
    hooks: ControllerHooks,
    options: BuildWebhooksOptions
  ): Promise<SyncHooks<Request, Response> & { close?: () => Promise<void> }>
  /** Sees every answer first (once per revision in a rollout): guessed kinds are corrected. */
  answered?(response: Response): void
}

/** The `tsImport` of the tsx the module's own project has, as `metactl dev` loads hooks. */
async function projectTsImport(
  path: string
): Promise<((specifier: string, parentUrl: string) => Promise<unknown>) | undefined> {
  let manifest: string
  try {
    manifest = createRequire(path).resolve('tsx/package.json')
  } catch {
    return undefined
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>
  }
  const entry = pkg.exports['./esm/api']?.import?.default
  if (entry === undefined) return undefined
  const api = (await import(pathToFileURL(join(dirname(manifest), entry)).href)) as {
    tsImport: (specifier: string, parentUrl: string) => Promise<unknown>
  }
  return api.tsImport
}

/**
 * Imports a module; a TypeScript one through its project's tsx, so that no loader flag is
 * needed (node's own type stripping does not map `.js` imports to `.ts` files).
 */
async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href
  const tsImport = /\.[cm]?tsx?$/.test(path) ? await projectTsImport(path) : undefined
  try {
    return (await (tsImport === undefined ? import(url) : tsImport(url, url))) as Record<
      string,
      unknown
    >
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
    throw new Error(
      `${messageOf(error)} (TypeScript hooks load with tsx, which the module's project does ` +
        'not have: npm install --save-dev tsx)',
      { cause: error }
    )
  }
}

/** The hooks an export holds: a function (one hook) or an object `{ sync, finalize?, customize? }`. */
function hooksOfExport(value: unknown, name: string): ControllerHookFunctions | undefined {
  if (typeof value === 'function')
    return { sync: value as ControllerHookFunctions['sync'], from: name }
  if (typeof value === 'object' && value !== null)
    return hooksIn(value as Record<string, unknown>, name)
  return undefined
}

/**
 * The hooks of `controller` in a module, as `metactl dev` finds them (the export named after its
 * `metadata.name`, else the top-level `sync`, `finalize` and `customize`), else a `default`
 * export; or the export `#name` names.
 */
function pickHooks(
  module: Readonly<Record<string, unknown>>,
  requested: string | undefined,
  controller: KubeObject,
  file: string,
  finalizing: boolean
): ControllerHookFunctions {
  if (requested !== undefined) {
    const found = hooksOfExport(module[requested], requested)
    if (found !== undefined) return found
    const exports = Object.keys(module).join(', ') || 'none'
    throw new OfflineError(
      `--hook-module ${file}#${requested}: export ${requested} is not a hook function nor an ` +
        `object { sync, finalize?, customize? } (exports: ${exports})`
    )
  }
  try {
    const found = controllerHooks(module, [controller], file).get(controller.metadata.name ?? '')
    if (found !== undefined) return found
  } catch (error) {
    const fallback = hooksOfExport(module['default'], 'default')
    if (fallback !== undefined) return fallback
    // A module of only a finalize hook previews finalizing.
    const finalize = module['finalize']
    if (finalizing && typeof finalize === 'function') {
      const hook = finalize as ControllerHookFunctions['sync']
      return { sync: hook, finalize: hook, from: 'sync' }
    }
    if (!(error instanceof HookExportError)) throw error
    throw new OfflineError(
      `--hook-module ${file}: ${error.message}; or name one with ${file}#<export>`
    )
  }
  throw new OfflineError(`--hook-module ${file}: no hooks found`)
}

/** Imports a `--hook-module path[#export]` and picks the controller's hooks (see {@link pickHooks}). */
async function importHookModule(
  specifier: string,
  controller: KubeObject,
  finalizing: boolean
): Promise<ControllerHookFunctions & { file: string; single: boolean }> {
  const hash = specifier.lastIndexOf('#')
  const file = hash === -1 ? specifier : specifier.slice(0, hash)
  const requested = hash === -1 ? undefined : specifier.slice(hash + 1)
  const path = resolve(file)
  if (!existsSync(path)) {
    throw new OfflineError(`--hook-module ${specifier}: no such file (looked for ${path})`)
  }
  let module: Record<string, unknown>
  try {
    module = await importModule(path)
  } catch (error) {
    throw new OfflineError(`--hook-module ${specifier}: cannot import ${path}: ${messageOf(error)}`)
  }
  const found = pickHooks(module, requested, controller, file, finalizing)
  return { ...found, file, single: typeof module[found.from] === 'function' }
}

/** A logger that prints what a webhook's answer was warned about, and drops the rest. */
function warningLogger(warn: (line: string) => void): Logger {
  return {
    ...silentLogger,
    debug: (_message, fields) => {
      const warnings = fields?.['warnings']
      if (Array.isArray(warnings))
        for (const warning of warnings) warn(`warning: hook response: ${String(warning)}`)
    },
  }
}

/**
 * Builds the hooks a render runs: `--hook-module` when given, else the controller's sync (or,
 * when finalizing, finalize) webhook pointed at `--hook-url`, speaking its version. The one hook
 * serves as both sync and finalize: the pipeline's hook choice decides which it is called as.
 */
export async function offlineHooks<Request, Response>(
  opts: OfflineHookOptions,
  hooks: ControllerHooks,
  kind: OfflineHookKind<Request, Response>,
  warn: (line: string) => void
): Promise<OfflineHooks<Request, Response>> {
  const built = await buildHook(opts, hooks, kind, warn)
  const call: HookFunction<Request, Response> = async (request, signal) => {
    const response = await built.call(request, signal)
    kind.answered?.(response)
    return response
  }
  return {
    description: built.description,
    hooks: { sync: call, finalize: call },
    customize: built.customize,
    close: () => built.close(),
  }
}

async function buildHook<Request, Response>(
  opts: OfflineHookOptions,
  hooks: ControllerHooks,
  kind: OfflineHookKind<Request, Response>,
  warn: (line: string) => void
): Promise<{
  description: string
  call: HookFunction<Request, Response>
  customize: OfflineCustomize | undefined
  close(): Promise<void>
}> {
  const finalizing = opts.finalizing === true
  if (opts.hookModule !== undefined) {
    const found = await importHookModule(opts.hookModule, kind.controller, finalizing)
    // One hook serves as both: finalize when finalizing and the module has one, else sync.
    const name = finalizing && found.finalize !== undefined ? 'finalize' : 'sync'
    const hook = found[name] ?? found.sync
    const adapted = inProcessHooksOf(kind.controller.kind as 'CompositeController', {
      [name]: hook,
      ...(found.customize === undefined ? {} : { customize: found.customize }),
    }) as unknown as SyncHooks<Request, Response> & { customize?: OfflineCustomize }
    const call = adapted[name]
    if (call === undefined) throw new Error('the in-process adapter dropped the hook')
    // `#sync` or `#finalize` for top-level hooks, `#tenants.sync` for an object export's.
    const shown = found.from === 'sync' ? name : found.single ? found.from : `${found.from}.${name}`
    return {
      description: `hook ${found.file}#${shown}`,
      call,
      customize: adapted.customize,
      close: () => Promise.resolve(),
    }
  }
  const url = opts.hookUrl ?? ''
  try {
    new URL(url)
  } catch {
    throw new OfflineError(`--hook-url: "${url}" is not a valid URL`)
  }
  const declared = (finalizing ? hooks.finalize : undefined) ?? hooks.sync
  const webhook = declared?.webhook
  // The controller's own settings, but none of its TLS and auth: --hook-url is a local server.
  const pointed: HookSpec = {
    version: declared?.version ?? 'v1',
    webhook: {
      url,
      timeoutMs: webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      decodeMode: webhook?.decodeMode,
    },
  }
  const built = await kind.webhooks(
    { sync: pointed, finalize: pointed, customize: undefined },
    { log: warningLogger(warn), controllerName: 'render', controllerType: 'render' }
  )
  const call = finalizing ? built.finalize : built.sync
  if (call === undefined) throw new Error('the webhook builder built no hook')
  return {
    description: `hook ${url} (${pointed.version})`,
    call,
    // A customize webhook is the controller's own; --hook-url names one sync hook.
    customize: undefined,
    close: built.close ?? (() => Promise.resolve()),
  }
}
