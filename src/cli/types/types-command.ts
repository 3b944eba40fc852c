/**
 * `metactl types CRD.yaml`: prints (or writes) the TypeScript types of a custom resource,
 * generated from its CRD's schema.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { Command } from 'commander'
import { CrdSchemaError } from '../../sdk/crd-schema.js'
import { crdToTypeScript } from '../../sdk/crd-types.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { messageOf } from '../../core/message-of.js'

interface TypesOptions {
  readonly output?: string
  readonly crdVersion?: string
  readonly name?: string
}

function readCrd(file: string, name: string | undefined): unknown {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new CliError(`${file}: ${code === 'ENOENT' ? 'no such file' : String(error)}`)
  }
  let objects
  try {
    objects = parseManifests(text, file)
  } catch (error) {
    throw new CliError(messageOf(error))
  }
  const crds = objects.filter(
    (o) => o.kind === 'CustomResourceDefinition' && (name === undefined || o.metadata.name === name)
  )
  const [crd] = crds
  if (crd === undefined || crds.length > 1) {
    const names = crds.map((c) => c.metadata.name ?? '').join(', ')
    throw new CliError(
      crd === undefined
        ? `${file}: no CustomResourceDefinition${name === undefined ? '' : ` named ${name}`}`
        : `${file} holds ${crds.length} CRDs (${names}); pick one with --name`
    )
  }
  return crd
}

/** Builds `metactl types`. */
export function typesCommand(io: CliIo): Command {
  return new Command('types')
    .description('generate the TypeScript types of a custom resource from its CRD schema')
    .argument('<crd.yaml>', 'a file with the CustomResourceDefinition')
    .option('-o, --output <file>', 'write the module to this file instead of stdout')
    .option('--crd-version <version>', 'the CRD version to use (default: the storage version)')
    .option('--name <crd-name>', 'the CRD to use when the file holds several')
    .addHelpText(
      'after',
      [
        '',
        'The module exports <Kind>Spec, <Kind>Status and <Kind>, for typed hooks:',
        '  defineCompositeHook<Kind, ConfigMap, KindStatus>(({ parent }) => ...)',
        '',
        'Example:',
        '  metactl types deploy/crd.yaml -o src/types.ts',
      ].join('\n')
    )
    .action((file: string, opts: TypesOptions) => {
      let text: string
      try {
        text = crdToTypeScript(
          readCrd(file, opts.name),
          opts.crdVersion === undefined ? {} : { version: opts.crdVersion }
        )
      } catch (error) {
        if (error instanceof CrdSchemaError) throw new CliError(`${file}: ${error.message}`)
        throw error
      }
      if (opts.output === undefined) io.out(text.trimEnd())
      else {
        writeFileSync(opts.output, text)
        io.err(`wrote ${opts.output}`)
      }
    })
}
