/**
 * The error for a hook response body that cannot be used.
 *
 * @module
 */
import type { HookName, HookVersion, ResponseDecodeMode } from './hook-model.js'

/**
 * What is wrong with a response.
 *
 * - `syntax`: the body is not JSON (always fatal).
 * - `type`: a field has the wrong JSON type, or a returned object lacks `apiVersion`/`kind`/
 *   `metadata` (always fatal).
 * - `strict`: unknown or duplicate fields; fatal only in `strict` mode.
 * - `invalid`: well-typed but contradictory or unusable content, such as a related rule combining
 *   `names` with `labelSelector` (always fatal).
 */
export type HookResponseProblem = 'syntax' | 'type' | 'strict' | 'invalid'

/** Where the response came from, for the message. */
export interface HookResponseSource {
  readonly version: HookVersion
  readonly hook: HookName
  readonly mode: ResponseDecodeMode
}

/**
 * Reports a hook response that cannot be decoded, with upstream's message prefix.
 *
 * @remarks
 * Messages start like upstream's so that logs and events read the same:
 * `can't unmarshal webhookResponse (version: v1, type: sync): …` for syntax and type errors, and
 * `strict validation failed for v2 webhookResponse (type: sync, mode: strict): unknown field "foo"`
 * for strict-mode issues (several issues are listed as `[a, b]`, like Go's aggregate error). The
 * rest of the message says what the hook has to change.
 */
export class HookResponseError extends Error {
  override readonly name = 'HookResponseError'
  /** The kind of problem; see {@link HookResponseProblem}. */
  readonly problem: HookResponseProblem
  /** The hook protocol version the response was decoded as. */
  readonly version: HookVersion
  /** The hook that answered. */
  readonly hook: HookName
  /** The decode mode that was in force. */
  readonly mode: ResponseDecodeMode
  /** Each problem found, with the JSON path of the field, e.g. `unknown field "foo"`. */
  readonly issues: readonly string[]

  /** Creates the error from the problem kind, the response source and the issues found. */
  constructor(
    problem: HookResponseProblem,
    source: HookResponseSource,
    issues: readonly string[],
    options?: ErrorOptions
  ) {
    super(problemMessage(problem, source, issues), options)
    this.problem = problem
    this.version = source.version
    this.hook = source.hook
    this.mode = source.mode
    this.issues = issues
  }
}

function problemMessage(
  problem: HookResponseProblem,
  { version, hook, mode }: HookResponseSource,
  issues: readonly string[]
): string {
  const detail = issues.length === 1 ? (issues[0] ?? '') : `[${issues.join(', ')}]`
  switch (problem) {
    case 'syntax':
      return (
        `can't unmarshal webhookResponse (version: ${version}, type: ${hook}): ${detail}; ` +
        `the hook must answer with a single JSON object as the response body`
      )
    case 'type':
      return `can't unmarshal webhookResponse (version: ${version}, type: ${hook}): ${detail}`
    case 'strict':
      return (
        `strict validation failed for ${version} webhookResponse (type: ${hook}, mode: ${mode}): ` +
        `${detail}; remove or rename these fields (names are case-sensitive and may appear only ` +
        `once per object), or set webhook.responseUnMarshallMode to "loose" to only log them`
      )
    case 'invalid':
      return `invalid ${version} webhookResponse (type: ${hook}): ${detail}`
  }
}
