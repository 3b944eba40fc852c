// Runs the CLI as a user would: a separate process from the sources (under tsx), with its exit
// code and both output streams, whether it succeeded or not.
import { execFile } from 'node:child_process'

/** What one `metactl` run produced. */
export interface MetactlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Options of {@link metactl}. */
export interface MetactlOptions {
  /** Merged over this process's environment. */
  readonly env?: NodeJS.ProcessEnv
  readonly timeoutMs?: number
  /** Runs the built CLI (`bin/metactl.js`, needs `npm run build`) with plain node, no tsx. */
  readonly built?: boolean
}

/** Runs `metactl ...args`. */
export function metactl(
  args: readonly string[],
  options: MetactlOptions = {}
): Promise<MetactlResult> {
  const entry = options.built === true ? ['bin/metactl.js'] : ['--import', 'tsx', 'src/cli/main.ts']
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...entry, ...args],
      { timeout: options.timeoutMs ?? 180_000, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })
}
