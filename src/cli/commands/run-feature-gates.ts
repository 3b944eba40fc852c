/**
 * `metactl run --feature-gates` (our addition): client-side feature gates by client-go's names,
 * so that what turns a gate off for a Go controller turns it off here too. The only one is
 * `WatchListClient` (streaming initial lists, on by default); client-go's environment variable
 * `KUBE_FEATURE_WatchListClient` is read as well, and the flag wins over it.
 *
 * @module
 */
import { CliError } from '../cli-error.js'

/** The client-side feature gates `metactl run` knows. */
export interface ClientFeatureGates {
  /** Informers take streaming initial lists (KEP-3157) where the server allows them. */
  readonly watchListClient: boolean
}

/** Every known gate with its default, by client-go's name. */
const DEFAULTS: Readonly<Record<string, boolean>> = { WatchListClient: true }

/** Reads a boolean as Go's `strconv.ParseBool` does; undefined for anything else. */
function goBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false
  return undefined
}

function usage(message: string): CliError {
  return new CliError(message, 2)
}

/** The gates `KUBE_FEATURE_<Name>` variables set, as client-go reads them (a bad value: refused). */
function gatesFromEnv(env: NodeJS.ProcessEnv): Record<string, boolean> {
  const gates: Record<string, boolean> = {}
  for (const name of Object.keys(DEFAULTS)) {
    const text = env[`KUBE_FEATURE_${name}`]
    if (text === undefined || text === '') continue
    const value = goBool(text)
    if (value === undefined)
      throw usage(`KUBE_FEATURE_${name} must be true or false, got "${text}"`)
    gates[name] = value
  }
  return gates
}

/**
 * Checks `--feature-gates` (`Name=true|false,...`) over the `KUBE_FEATURE_<Name>` environment.
 *
 * @throws CliError with exit code 2 for an unknown gate or a value that is not a boolean.
 */
export function parseClientFeatureGates(
  text: string | undefined,
  env: NodeJS.ProcessEnv
): ClientFeatureGates {
  const gates: Record<string, boolean> = { ...DEFAULTS, ...gatesFromEnv(env) }
  for (const entry of (text ?? '').split(',')) {
    if (entry.trim() === '') continue
    const match = /^\s*([A-Za-z0-9]+)=(.*?)\s*$/.exec(entry)
    const name = match?.[1] ?? ''
    const value = goBool(match?.[2] ?? '')
    if (!(name in DEFAULTS))
      throw usage(
        `--feature-gates: unknown gate in "${entry.trim()}" (known: ${Object.keys(DEFAULTS).join(', ')})`
      )
    if (value === undefined)
      throw usage(`--feature-gates: ${name} must be true or false, got "${entry.trim()}"`)
    gates[name] = value
  }
  return { watchListClient: gates['WatchListClient'] ?? true }
}
