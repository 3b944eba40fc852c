/**
 * `metactl completion bash|zsh|fish`: prints a completion script for the shell.
 *
 * @module
 */
import { Argument, Command } from 'commander'
import type { CliIo } from '../cli-io.js'
import { completionScript, SHELLS } from './completion-scripts.js'
import type { Shell } from './completion-scripts.js'
import { commandSpec } from './completion-spec.js'

/** Builds `metactl completion`; `root` returns the whole program, read when the command runs. */
export function completionCommand(io: CliIo, root: () => Command): Command {
  return new Command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText(
      'after',
      [
        '',
        'Load it in the current shell:',
        '  bash:  source <(metactl completion bash)',
        '  zsh:   source <(metactl completion zsh)',
        '  fish:  metactl completion fish | source',
        'Or install it for every new shell:',
        '  bash:  metactl completion bash > ~/.local/share/bash-completion/completions/metactl',
        '  fish:  metactl completion fish > ~/.config/fish/completions/metactl.fish',
      ].join('\n')
    )
    .action((shell: Shell) => {
      io.out(completionScript(shell, commandSpec(root())).trimEnd())
    })
}
