/**
 * The command tree of `metactl` as plain data, read from the commander program itself, so the
 * completion scripts can never list a command or flag the CLI does not have.
 *
 * @module
 */
import type { Command } from 'commander'

/** One flag of a command. */
export interface FlagSpec {
  /** `--output`; flags with only a short form are left out. */
  readonly long: string
  readonly short?: string
  readonly description: string
  /** Whether the flag takes a value. */
  readonly takesValue: boolean
  /** Allowed values, when the CLI restricts them. */
  readonly choices: readonly string[]
}

/** A command, its path from the root and its flags and subcommands. */
export interface CommandSpec {
  /** Words after `metactl`: `[]` for the root, `['cluster', 'up']`. */
  readonly path: readonly string[]
  readonly description: string
  readonly flags: readonly FlagSpec[]
  /** Allowed values of the first argument, when the CLI restricts them (`completion <shell>`). */
  readonly argumentChoices: readonly string[]
  readonly subcommands: readonly CommandSpec[]
}

/** Reads the command tree from a commander program. */
export function commandSpec(command: Command, path: readonly string[] = []): CommandSpec {
  const flags: FlagSpec[] = []
  for (const option of command.options) {
    // Hidden options are former names kept for old scripts: not offered to new ones.
    if (option.long === undefined || option.hidden) continue
    flags.push({
      long: option.long,
      ...(option.short === undefined ? {} : { short: option.short }),
      description: option.description,
      takesValue: option.required || option.optional,
      choices: option.argChoices ?? [],
    })
  }
  flags.push({
    long: '--help',
    short: '-h',
    description: 'display help',
    takesValue: false,
    choices: [],
  })
  return {
    path,
    description: command.description(),
    flags,
    argumentChoices: command.registeredArguments[0]?.argChoices ?? [],
    subcommands: command.commands
      .filter((sub) => sub.name() !== 'help')
      .map((sub) => commandSpec(sub, [...path, sub.name()])),
  }
}

/** Every command of the tree, the root first. */
export function allCommands(spec: CommandSpec): CommandSpec[] {
  return [spec, ...spec.subcommands.flatMap(allCommands)]
}
