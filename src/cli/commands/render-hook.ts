/**
 * The hook `metactl render` calls, the same for both controller kinds: the engine's own webhook
 * call pointed at `--hook-url`, or an SDK hook imported from `--hook-module` and run through the
 * SDK's in-process adapter.
 *
 * @module
 */
import type { Agent } from 'undici'
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../api/composite-controller-spec.js'
import type { ControllerHooks, HookSpec } from '../../api/controller-spec-fields.js'
import type { HookFunction } from '../../api/hook-model.js'
import { webhookFunction } from '../../engine/hooks/webhook-hooks.js'
import type { WireHook } from '../../engine/hooks/webhook-hooks.js'
import { CliError } from '../cli-error.js'
import { importHookModule } from './render-support.js'
import type { RenderOptions } from './render-support.js'

/** A hook to call, and what to call it in messages. */
export interface RenderHook<Request, Response> {
  readonly description: string
  call(request: Request): Promise<Response>
  close(): Promise<void>
}

/** How to reach one controller kind's sync or finalize hook. */
export interface RenderHookKind<Request, Response> {
  /** The kind's wire format for a webhook. */
  wire(hook: HookSpec, name: 'sync' | 'finalize'): WireHook<Request, Response>
  /** The SDK's in-process adapter of an imported hook function. */
  inProcess(hook: unknown, name: 'sync' | 'finalize'): HookFunction<Request, Response>
}

/**
 * Builds the hook a render calls: `--hook-module` when given, else `--hook-url`, speaking the
 * controller's `hooks.<name>.version` (finalize's when finalizing and declared, else sync's).
 */
export async function renderHook<Request, Response>(
  opts: RenderOptions,
  hooks: ControllerHooks,
  kind: RenderHookKind<Request, Response>,
  warn: (line: string) => void
): Promise<RenderHook<Request, Response>> {
  const finalizing = opts.finalizing === true
  const name = finalizing ? 'finalize' : 'sync'
  const signal = new AbortController().signal
  if (opts.hookModule !== undefined) {
    const { description, hook } = await importHookModule(opts.hookModule, finalizing)
    const call = kind.inProcess(hook, name)
    return { description, call: (r) => call(r, signal), close: () => Promise.resolve() }
  }
  const url = opts.hookUrl ?? ''
  try {
    new URL(url)
  } catch {
    throw new CliError(`--hook-url: "${url}" is not a valid URL`)
  }
  const hookSpec = (finalizing ? hooks.finalize : undefined) ?? hooks.sync
  const agents: Agent[] = []
  // The engine's own webhook call, pointed at --hook-url instead of the controller's URL.
  const call = webhookFunction(
    {
      url,
      timeoutMs: hookSpec?.webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      decodeMode: hookSpec?.webhook?.decodeMode,
    },
    name,
    kind.wire(hookSpec ?? { version: 'v1', webhook: undefined }, name),
    (warnings) => {
      for (const warning of warnings) warn(`warning: hook response: ${warning}`)
    },
    agents
  )
  return {
    description: `hook ${url} (${hookSpec?.version ?? 'v1'})`,
    call: (r) => call(r, signal),
    close: async () => {
      await Promise.all(agents.map((agent) => agent.close()))
    },
  }
}
