// Runs the CLI as a user would: a separate process from the sources (under tsx), with its exit
// code and both output streams, whether it succeeded or not.
import { execFile } from 'node:child_process'

/** What one `metactl` run produced. */
export interface MetactlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `metactl ...args`; `env` is merged over this process's environment. */
export function metactl(
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {}
): Promise<MetactlResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { timeout: options.timeoutMs ?? 180_000, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })
}
