/**
 * Loads a project's hook module, and loads it again after a change: each load gets a fresh module
 * graph through tsx's `tsImport` namespaces, so edits to the hook and to every file it imports
 * take effect without restarting the process.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CliError } from '../cli-error.js'

type TsImport = (
  specifier: string,
  options: { readonly parentURL: string; readonly namespace: string }
) => Promise<Record<string, unknown>>

/** Finds the project's own tsx, which loads TypeScript without a build step. */
async function projectTsImport(projectDir: string): Promise<TsImport> {
  const require = createRequire(join(projectDir, 'package.json'))
  let manifest: string
  try {
    manifest = require.resolve('tsx/package.json')
  } catch {
    throw new CliError(
      `metactl dev loads TypeScript hooks with tsx, which ${projectDir} does not have: ` +
        'npm install --save-dev tsx'
    )
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>
  }
  const entry = pkg.exports['./esm/api']?.import?.default
  if (entry === undefined) throw new CliError(`${manifest}: this tsx has no esm/api entry`)
  const api = (await import(pathToFileURL(join(dirname(manifest), entry)).href)) as {
    tsImport: TsImport
  }
  return api.tsImport
}

/** A hook module that can be loaded again. */
export class HookModule {
  readonly #file: string
  readonly #projectDir: string
  #tsImport: TsImport | undefined
  #generation = 0

  constructor(file: string, projectDir: string) {
    this.#file = file
    this.#projectDir = projectDir
  }

  /** The module's path relative to the project, for messages. */
  get shown(): string {
    return relative(this.#projectDir, this.#file)
  }

  /** Loads the module afresh and returns its exports; throws what its evaluation throws. */
  async load(): Promise<Readonly<Record<string, unknown>>> {
    if (!existsSync(this.#file))
      throw new CliError(`no hook module ${this.shown} (pass --hooks FILE)`)
    this.#tsImport ??= await projectTsImport(this.#projectDir)
    this.#generation++
    return this.#tsImport(pathToFileURL(this.#file).href, {
      parentURL: pathToFileURL(join(this.#projectDir, 'package.json')).href,
      namespace: `metactl-dev-${this.#generation}`,
    })
  }
}
