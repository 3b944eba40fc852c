/**
 * Go's flag syntax on a commander command, so that upstream Metacontroller's manifests, which
 * pass flags as Go's `flag` package reads them, work unchanged: one or two dashes
 * (`-workers=5`, `--workers=5`), a value in the same argument or the next one (`-workers 5`),
 * and booleans that never take the next argument (`-leader-election`, `-leader-election=false`).
 *
 * @module
 */
import { Command } from 'commander'
import type { ParseOptionsResult } from 'commander'

/**
 * How a long flag takes its value: `value` always has one (the next argument when none follows
 * `=`), `bool` is a Go boolean (`=true|false` or nothing), `switch` takes none.
 */
export type GoFlagKind = 'value' | 'bool' | 'switch'

/**
 * Rewrites `args` from Go's flag syntax to commander's: every flag named in `kinds` becomes
 * `--name` or `--name=value`, with a value taken from the next argument joined to it, so that a
 * value starting with a dash (`-workers -1`) stays a value, as in Go. Flag parsing stops where
 * Go's does, at `--` or at the first argument that is not a flag; the rest, and every flag not
 * in `kinds`, is passed on unchanged for commander to accept or refuse.
 */
export function normalizeGoFlags(
  args: readonly string[],
  kinds: ReadonlyMap<string, GoFlagKind>
): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? ''
    if (arg === '--' || arg === '-' || !arg.startsWith('-')) {
      out.push(...args.slice(i))
      break
    }
    const body = arg.slice(arg.startsWith('--') ? 2 : 1)
    const equals = body.indexOf('=')
    const name = equals < 0 ? body : body.slice(0, equals)
    const kind = kinds.get(name)
    if (kind === undefined || name === '') {
      out.push(arg)
      continue
    }
    if (equals >= 0) {
      out.push(`--${body}`)
      continue
    }
    const next = args[i + 1]
    if (kind === 'value' && next !== undefined) {
      out.push(`--${name}=${next}`)
      i++
    } else {
      // A Go boolean never takes the next argument; `=true` keeps commander from taking it.
      out.push(kind === 'bool' ? `--${name}=true` : `--${name}`)
    }
  }
  return out
}

/** The long flags of `command`, with how each takes its value. */
function flagKinds(command: Command): Map<string, GoFlagKind> {
  const kinds = new Map<string, GoFlagKind>([['help', 'switch']])
  for (const option of command.options) {
    if (option.long === undefined) continue
    const kind: GoFlagKind = option.required ? 'value' : option.optional ? 'bool' : 'switch'
    kinds.set(option.long.replace(/^--/, ''), kind)
  }
  return kinds
}

/**
 * A command that also reads Go's flag syntax (see {@link normalizeGoFlags}); an option with an
 * optional value (`--name [bool]`) is read as a Go boolean. Options added later, by any module,
 * are covered as well: the syntax is derived from the options at parse time.
 */
export class GoFlagCommand extends Command {
  /** Rewrites Go-style flags to commander's before commander reads them. */
  override parseOptions(argv: string[]): ParseOptionsResult {
    return super.parseOptions(normalizeGoFlags(argv, flagKinds(this)))
  }
}
