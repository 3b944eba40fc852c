// The `metactl` commands as the CLI registers them, and the ones the README's CLI table lists,
// so that a new command cannot go undocumented.
import { Command } from 'commander'
import { main } from '../../../src/cli/main.js'

/**
 * The program `main` builds for `metactl --help`, every subcommand registered: `parseAsync` is
 * held for that one call, so nothing runs and the tree is read as the CLI assembled it (its
 * registry is private to `main.ts`; subcommands' own help would exit the process).
 */
async function registeredProgram(): Promise<Command> {
  const original = Object.getOwnPropertyDescriptor(Command.prototype, 'parseAsync')
  if (original === undefined) throw new Error('commander has no Command.prototype.parseAsync')
  const parsed: Command[] = []
  Command.prototype.parseAsync = function (this: Command) {
    parsed.push(this)
    return Promise.resolve(this)
  }
  try {
    await main(['node', 'metactl', '--help'], { out: () => undefined, err: () => undefined })
  } finally {
    Object.defineProperty(Command.prototype, 'parseAsync', original)
  }
  const [program] = parsed
  if (program === undefined) throw new Error('metactl built no program')
  return program
}

/** Every registered command as its words (`['cluster', 'up']`), nested commands included. */
export async function registeredCommands(): Promise<string[][]> {
  const walk = (command: Command, prefix: readonly string[]): string[][] =>
    command.commands.flatMap((sub) => {
      const words = [...prefix, sub.name()]
      return [words, ...walk(sub, words)]
    })
  return walk(await registeredProgram(), [])
}

/**
 * The commands the README's CLI table lists, as word lists: a row's first cell such as
 * `` `metactl cluster install\|up\|status\|down` `` lists `cluster` and `cluster install`,
 * `cluster up`, ...; words in capitals or brackets (arguments) end the command.
 */
export function tableCommands(readme: string): string[][] {
  const found: string[][] = []
  for (const line of readme.split('\n')) {
    const cell = /^\|\s*`metactl ([^`]*)`/.exec(line)?.[1]
    if (cell === undefined) continue
    const words = cell.replace(/\\\|/g, '|').split(/\s+/)
    const prefix: string[] = []
    for (const word of words) {
      if (!/^[a-z][\w|-]*$/.test(word)) break
      const alternatives = word.split('|')
      for (const alternative of alternatives) found.push([...prefix, alternative])
      if (alternatives.length > 1) break
      prefix.push(word)
    }
  }
  return found
}

/** The registered commands the table does not list, as `metactl words`. */
export function missingCommands(
  registered: readonly (readonly string[])[],
  listed: readonly (readonly string[])[]
): string[] {
  const known = new Set(listed.map((words) => words.join(' ')))
  return registered
    .map((words) => words.join(' '))
    .filter((command) => !known.has(command))
    .map((command) => `metactl ${command}`)
}
