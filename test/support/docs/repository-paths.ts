// Finds the backticked repository paths a doc names that do not exist, so that a moved or
// deleted file cannot leave a doc pointing at nothing.
import { codeSpans } from './markdown-prose.js'

/** Extensions that make a backticked word a file name even without a `/`. */
const FILE_EXTENSIONS = /\.(ts|mts|js|mjs|cjs|json|ya?ml|md|sh|go|mod|sum|py)$/

/** Characters no repository path here holds: commands, flags, URLs, selectors, placeholders. */
const NOT_A_PATH = /[\s:=|<>$(),'"@{}\\]|^[~/\-.+]|^\*+$/

/** Every path of a tree, files and the folders above them, each folder ending in `/`. */
export function withFolders(files: Iterable<string>): Set<string> {
  const paths = new Set<string>()
  for (const file of files) {
    paths.add(file)
    const parts = file.split('/')
    for (let i = 1; i < parts.length; i++) paths.add(`${parts.slice(0, i).join('/')}/`)
  }
  return paths
}

/**
 * The code span read as a path, or undefined when it is not one: no `/` and no file extension,
 * or a character no path holds. A `:line` or `#anchor` suffix is dropped; `…` reads as `*`.
 */
export function pathOf(code: string): string | undefined {
  const path = code.replace(/(?::\d+(?:-\d+)?|#[\w-]*)$/, '').replace(/…/g, '*')
  if (NOT_A_PATH.test(path)) return undefined
  if (!path.includes('/') && !FILE_EXTENSIONS.test(path)) return undefined
  return path
}

function globToRegExp(glob: string): RegExp {
  const source = glob
    .split(/(\*\*\/|\*)/)
    .map((part) => {
      if (part === '**/') return '(?:.*/)?'
      if (part === '*') return '[^/]*'
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    })
    .join('')
  return new RegExp(`^${source}$`)
}

/** Whether `path` (a glob perhaps, a folder when it ends in `/`) names something in `tree`. */
function existsIn(tree: ReadonlySet<string>, path: string): boolean {
  if (!path.includes('*')) return tree.has(path) || tree.has(`${path}/`)
  const pattern = globToRegExp(path)
  const folder = globToRegExp(path.endsWith('/') ? path : `${path}/`)
  for (const candidate of tree) if (pattern.test(candidate) || folder.test(candidate)) return true
  return false
}

/** Where a doc's relative paths may start: the repository root, `src/` and its subject folders. */
export interface PathBases {
  /** Every file and folder of the repository. */
  readonly tree: ReadonlySet<string>
  /** Folders (ending in `/`) a path may be relative to, `''` being the root. */
  readonly bases: readonly string[]
  /** Other trees a doc describes, e.g. the project `metactl init` writes. */
  readonly others?: readonly ReadonlySet<string>[]
}

/**
 * A doc's subject folders: its own folder and the folders, with their parents, of every path it
 * names in full (from the repository root). A doc that names `src/engine/sync/run-sync.ts` may
 * then say `children/claim-children.ts` for `src/engine/children/claim-children.ts`.
 */
export function subjectFolders(file: string, text: string, tree: ReadonlySet<string>): string[] {
  const own = file.includes('/') ? [file.slice(0, file.lastIndexOf('/') + 1)] : []
  const named = codeSpans(text)
    .map((span) => pathOf(span.code))
    .filter((path): path is string => path !== undefined && existsIn(tree, path))
    .flatMap((path) => [...withFolders([tree.has(`${path}/`) ? `${path}/` : path])])
    .filter((path) => path.endsWith('/'))
  return [...new Set(['', 'src/', ...own, ...named])]
}

/** Whether a bare file name (no `/`) names a file anywhere in the tree. */
function bareNameExists(tree: ReadonlySet<string>, name: string): boolean {
  const pattern = globToRegExp(name)
  for (const path of tree) if (pattern.test(path.slice(path.lastIndexOf('/') + 1))) return true
  return false
}

/** Whether `path` resolves from one of the bases, or a bare name names some file. */
function resolves(path: string, where: PathBases): boolean {
  const trees = [where.tree, ...(where.others ?? [])]
  if (!path.includes('/')) return trees.some((tree) => bareNameExists(tree, path))
  return trees.some((tree) => where.bases.some((base) => existsIn(tree, `${base}${path}`)))
}

/**
 * Whether a code span is meant as a path of these trees: a file name (known extension), or a
 * path whose first segment is a folder found from some base (so `apps/v1` or `greeting/hello`
 * are not taken for paths, while `src/engine/gone/` is).
 */
function meantAsPath(path: string, where: PathBases): boolean {
  if (FILE_EXTENSIONS.test(path.replace(/\/$/, ''))) return true
  const first = `${path.split('/')[0] ?? ''}/`
  if (first.includes('*')) return true
  const trees = [where.tree, ...(where.others ?? [])]
  return trees.some((tree) => where.bases.some((base) => tree.has(`${base}${first}`)))
}

/** The backticked paths of a doc that name nothing, as `file:line path`. */
export function missingPaths(file: string, text: string, where: PathBases): string[] {
  return codeSpans(text).flatMap((span) => {
    const path = pathOf(span.code)
    if (path === undefined || !meantAsPath(path, where) || resolves(path, where)) return []
    return [`${file}:${String(span.line)} \`${span.code}\` does not exist`]
  })
}
