/**
 * `metactl init [dir]`: scaffolds a TypeScript controller project that passes `npm test` as
 * generated.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command } from 'commander'
import { crdToTypeScript } from '../../sdk/crd-types.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { crdObject, manifestFiles } from './scaffold-manifests.js'
import { scaffoldNames } from './scaffold-names.js'
import type { ScaffoldNames } from './scaffold-names.js'
import { dockerFiles, packageJson, readme, tsconfigFiles } from './scaffold-project.js'
import type { ScaffoldVersions } from './scaffold-project.js'
import {
  hookSource,
  integrationTestSource,
  serverSource,
  unitTestSource,
} from './scaffold-sources.js'

interface InitOptions {
  readonly name?: string
  readonly kind: string
  readonly group: string
  readonly apiVersion: string
  readonly package?: string
  readonly force?: boolean
}

/** Every file of a scaffolded project, by path relative to its root. */
export function scaffoldFiles(
  n: ScaffoldNames,
  versions: ScaffoldVersions
): Record<string, string> {
  return {
    'package.json': packageJson(n, versions),
    ...tsconfigFiles(),
    ...dockerFiles(),
    'README.md': readme(n),
    ...manifestFiles(n),
    'src/types.ts': crdToTypeScript(crdObject(n)),
    'src/hook.ts': hookSource(n),
    'src/server.ts': serverSource(),
    'test/hook.test.ts': unitTestSource(n),
    'test/controller.test.ts': integrationTestSource(n),
  }
}

/**
 * The metacontroller-ts dependency: a `file:` link when metactl runs from a checkout (the package
 * is not on a registry yet), the version range otherwise.
 */
/** This package's root (`src/cli/init` and `dist/cli/init` are both three levels down). */
function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
}

/**
 * Packs this package (as installed, or this checkout: its `files`, `dist/` included) into
 * `vendor/` of the project, so that the project and its Dockerfile install it from inside the
 * project: the image builds in its own context, with no registry entry for metacontroller-ts.
 */
function vendorPackage(target: string): string {
  const vendor = join(target, 'vendor')
  mkdirSync(vendor, { recursive: true })
  let output: string
  try {
    // --ignore-scripts: an installed package has no sources to build; dist/ is already there.
    output = execFileSync(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', vendor],
      {
        cwd: packageRoot(),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }
    )
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ''
    throw new CliError(
      `could not pack metacontroller-ts into ${vendor} (npm pack): ${stderr.trim().split('\n').at(-1) ?? ''}; ` +
        'pass --package SPEC to depend on it another way'
    )
  }
  const [packed] = JSON.parse(output) as { filename: string }[]
  if (packed === undefined) throw new CliError('npm pack wrote no tarball')
  return `file:vendor/${packed.filename}`
}

function versions(spec: string): ScaffoldVersions {
  // The versions this package is built and tested with, so a scaffold installs known-good ones.
  return {
    metacontrollerTs: spec,
    typescript: '5.9.3',
    tsx: '4.23.15',
    typesNode: '20.19.43',
    yaml: '2.9.1',
  }
}

function init(io: CliIo, dir: string, opts: InitOptions): void {
  const target = resolve(dir)
  const names = scaffoldNames({
    name: opts.name ?? basename(target),
    kind: opts.kind,
    group: opts.group,
    version: opts.apiVersion,
  })
  if (existsSync(target) && readdirSync(target).length > 0 && opts.force !== true) {
    throw new CliError(`${target} is not empty; pick a new directory (or --force to write into it)`)
  }
  mkdirSync(target, { recursive: true })
  const files = scaffoldFiles(names, versions(opts.package ?? vendorPackage(target)))
  for (const [path, text] of Object.entries(files)) {
    const file = join(target, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  const shown = relative(process.cwd(), target) || '.'
  io.out(
    `Created ${names.name} in ${shown}: a ${names.kind} (${names.group}/${names.version}) controller.`
  )
  io.out('')
  io.out('Next:')
  if (shown !== '.') io.out(`  cd ${shown}`)
  io.out('  npm install')
  io.out('  npm test           # unit test, and the controller on a local control plane')
  io.out('  npx metactl dev    # run it against a local cluster; edits to src/ reload the hook')
}

/** Builds `metactl init`. */
export function initCommand(io: CliIo): Command {
  return new Command('init')
    .description(
      'scaffold a TypeScript controller project (CRD, hook, tests, Dockerfile, Kustomize)'
    )
    .argument('[dir]', 'directory to create the project in', '.')
    .option('--name <name>', 'package and CompositeController name (default: the directory name)')
    .option('--kind <Kind>', 'kind of the custom resource', 'Greeting')
    .option('--group <group>', 'API group of the custom resource', 'example.com')
    .option('--api-version <version>', 'version of the custom resource', 'v1')
    .option(
      '--package <spec>',
      'npm spec of the metacontroller-ts dependency (default: this package, packed into vendor/)'
    )
    .option('--force', 'write into a directory that is not empty')
    .addHelpText(
      'after',
      ['', 'Example:', '  metactl init my-controller --kind Website --group apps.example.com'].join(
        '\n'
      )
    )
    .action((dir: string, opts: InitOptions) => {
      init(io, dir, opts)
    })
}
