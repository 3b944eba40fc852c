// The setup the `metactl render` command tests share: a temporary folder for their input files and
// a runner of `metactl render` in this process (through `main`, not a child process, so a test
// stays fast), with both output streams captured line by line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../src/cli/main.js'

/** What one in-process `metactl render` run produced. */
export interface RenderResult {
  readonly code: number
  readonly out: string[]
  readonly err: string[]
}

/**
 * A temporary folder for a render test's inputs and the runner that renders them. The members are
 * plain function properties, not methods, so a test file may destructure them.
 */
export interface RenderWorkspace {
  /** Writes `text` to the file `name` in the folder and returns its path. */
  readonly file: (name: string, text: string) => string
  /** Runs `metactl render ...args`. */
  readonly render: (...args: string[]) => Promise<RenderResult>
  /** Removes the folder and everything written to it (for the test file's `after` hook). */
  readonly remove: () => void
}

/** Creates a temporary folder named from `prefix`, with its file writer and render runner. */
export function renderWorkspace(prefix: string): RenderWorkspace {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return {
    file: (name, text) => {
      const path = join(dir, name)
      writeFileSync(path, text)
      return path
    },
    render: async (...args) => {
      const out: string[] = []
      const err: string[] = []
      const code = await main(['node', 'metactl', 'render', ...args], {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
      })
      return { code, out, err }
    },
    remove: () => {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
