/**
 * Shell completion scripts for bash, zsh and fish, generated from the command tree.
 *
 * @remarks
 * bash and zsh share one script (zsh loads it through `bashcompinit`), so both complete the same
 * way: subcommands, then flags, the allowed values of a flag with choices, and file names for
 * other flag values and arguments. fish gets its native `complete` lines.
 *
 * @module
 */
import type { CommandSpec } from './completion-spec.js'
import { allCommands } from './completion-spec.js'

/** The shells `metactl completion` supports. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const

/** One of {@link SHELLS}. */
export type Shell = (typeof SHELLS)[number]

function caseArm(key: string, words: readonly string[]): string {
  return `    ${JSON.stringify(key)}) echo ${JSON.stringify(words.join(' '))} ;;`
}

/** The bash script; `metactl completion bash > /etc/bash_completion.d/metactl`. */
export function bashScript(root: CommandSpec): string {
  const commands = allCommands(root)
  // A command's next words: its subcommands, else the allowed values of its argument.
  const subcommandArms = commands
    .filter((c) => c.subcommands.length > 0 || c.argumentChoices.length > 0)
    .map((c) =>
      caseArm(
        c.path.join(' '),
        c.subcommands.length > 0 ? c.subcommands.map((s) => s.path.at(-1) ?? '') : c.argumentChoices
      )
    )
  const flagArms = commands.map((c) =>
    caseArm(
      c.path.join(' '),
      c.flags.flatMap((f) => (f.short === undefined ? [f.long] : [f.long, f.short]))
    )
  )
  const valueArms = commands.flatMap((c) =>
    c.flags
      .filter((f) => f.takesValue)
      .flatMap((f) =>
        [f.long, ...(f.short === undefined ? [] : [f.short])].map((flag) => ({ c, f, flag }))
      )
      .map(({ c: cmd, f, flag }) =>
        caseArm(`${cmd.path.join(' ')}|${flag}`, f.choices.length > 0 ? f.choices : ['__files__'])
      )
  )
  return `# bash completion for metactl. Load it with: source <(metactl completion bash)
_metactl_subcommands() {
  case "$1" in
${subcommandArms.join('\n')}
  esac
}
_metactl_flags() {
  case "$1" in
${flagArms.join('\n')}
  esac
}
_metactl_values() {
  case "$1" in
${valueArms.join('\n')}
  esac
}
_metactl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" i word subs values
  if (( COMP_CWORD > 0 )); then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    subs=" $(_metactl_subcommands "$path") "
    if [[ "$subs" == *" $word "* ]]; then path="\${path:+$path }$word"; fi
  done
  if [[ "$prev" == -* ]]; then
    values="$(_metactl_values "$path|$prev")"
    if [[ "$values" == "__files__" ]]; then
      COMPREPLY=( $(compgen -f -- "$cur") )
      return 0
    elif [[ -n "$values" ]]; then
      COMPREPLY=( $(compgen -W "$values" -- "$cur") )
      return 0
    fi
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_metactl_flags "$path")" -- "$cur") )
    return 0
  fi
  subs="$(_metactl_subcommands "$path")"
  if [[ -n "$subs" ]]; then
    COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
  return 0
}
complete -o filenames -F _metactl metactl
`
}

/** The zsh script: the bash one, loaded through zsh's bash completion emulation. */
export function zshScript(root: CommandSpec): string {
  return `#compdef metactl
# zsh completion for metactl. Load it with: source <(metactl completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(root)}`
}

function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** The fish script; `metactl completion fish > ~/.config/fish/completions/metactl.fish`. */
export function fishScript(root: CommandSpec): string {
  const lines = ['# fish completion for metactl', 'complete -c metactl -f']
  for (const command of allCommands(root)) {
    // Fish cannot tell nested paths apart by position, so a command's completions apply once
    // all its path words were seen and none of its subcommands yet.
    const seen = command.path.map((word) => `__fish_seen_subcommand_from ${word}`)
    const subs = command.subcommands.map((s) => s.path.at(-1) ?? '')
    const notYet = subs.length > 0 ? [`not __fish_seen_subcommand_from ${subs.join(' ')}`] : []
    const condition = command.path.length === 0 ? ['__fish_use_subcommand'] : [...seen, ...notYet]
    const when = `-n ${fishQuote(condition.join('; and '))}`
    for (const choice of command.argumentChoices) {
      lines.push(`complete -c metactl ${when} -a ${choice}`)
    }
    for (const sub of command.subcommands) {
      lines.push(
        `complete -c metactl ${when} -a ${sub.path.at(-1) ?? ''} -d ${fishQuote(sub.description)}`
      )
    }
    const flagWhen = command.path.length === 0 ? `-n ${fishQuote('__fish_use_subcommand')}` : when
    for (const flag of command.flags) {
      const short = flag.short === undefined ? '' : ` -s ${flag.short.slice(1)}`
      const value =
        flag.choices.length > 0
          ? ` -x -a ${fishQuote(flag.choices.join(' '))}`
          : flag.takesValue
            ? ' -r -F'
            : ''
      lines.push(
        `complete -c metactl ${flagWhen} -l ${flag.long.slice(2)}${short}${value} -d ${fishQuote(flag.description)}`
      )
    }
  }
  return `${lines.join('\n')}\n`
}

/** The script for a shell. */
export function completionScript(shell: Shell, root: CommandSpec): string {
  switch (shell) {
    case 'bash':
      return bashScript(root)
    case 'zsh':
      return zshScript(root)
    case 'fish':
      return fishScript(root)
  }
}
