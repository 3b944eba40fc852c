/**
 * `metactl render`: runs a controller's sync (or finalize) hook offline, for a parent and
 * optional observed children read from files, and prints the desired children and what the
 * engine did about them. No cluster is needed: the engine's sync pipeline runs over an
 * in-memory cluster seeded from the files (`render-pipeline.ts`), for CompositeControllers
 * (`render-composite.ts`) and DecoratorControllers (`render-decorator.ts`).
 *
 * @module
 */
import { Command, Option } from 'commander'
import type { KubeObject } from '../../core/kube-object.js'
import { parseCompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { parseDecoratorControllerSpec } from '../../api/decorator-controller-spec.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { messageOf } from '../../core/message-of.js'
import { NothingPlannedError, OfflineError } from '../../offline/offline-error.js'
import { syncCompositeOffline } from '../../offline/sync-composite-offline.js'
import { syncDecoratorOffline } from '../../offline/sync-decorator-offline.js'
import { formatDiff } from './render-diff.js'
import { readInputs, readObjects } from './render-inputs.js'
import { isControllerRevision } from './render-rollout.js'
import type { RenderOptions } from './render-inputs.js'
import {
  formatCompositeJson,
  formatCompositeText,
  formatDecoratorJson,
  formatDecoratorText,
} from './render-print.js'

export { RENDER_PARENT_UID } from './render-inputs.js'

const KINDS = ['CompositeController', 'DecoratorController']

/** Reads the one controller a `--controller` file holds. */
function readController(path: string): KubeObject {
  const objects = readObjects('--controller', path)
  const controllers = objects.filter((o) => KINDS.includes(o.kind))
  const [object] = controllers
  if (object === undefined || controllers.length > 1) {
    const found =
      controllers.length > 1
        ? `${controllers.length} controllers`
        : objects.map((o) => o.kind).join(', ') || 'nothing'
    throw new CliError(
      `--controller ${path}: expected one CompositeController or DecoratorController, found ${found}`
    )
  }
  return object
}

function parseSpec<T>(path: string, object: KubeObject, parse: (spec: unknown) => T): T {
  try {
    return parse(object['spec'])
  } catch (error) {
    throw new CliError(
      `--controller ${path}: invalid ${object.kind} ${object.metadata.name ?? ''}: ${messageOf(error)}`
    )
  }
}

/** Prints why the engine would not sync the target: a comment, or JSON with no plan. */
function printNothingPlanned(io: CliIo, opts: RenderOptions, why: string): void {
  if (opts.output === 'json' && opts.diff !== true) {
    const none = ['create', 'update', 'recreate', 'delete', 'unchanged', 'skipped', 'failed']
    const plan = Object.fromEntries(none.map((op) => [op, []]))
    io.out(JSON.stringify({ desired: [], plan, notSynced: why }, null, 2))
  } else {
    io.out(`# Nothing planned: ${why}`)
  }
}

/** Renders and prints; the text and JSON formats are the kind's own. */
async function render(io: CliIo, opts: RenderOptions): Promise<void> {
  if ((opts.hookUrl === undefined) === (opts.hookModule === undefined)) {
    throw new CliError('give exactly one of --hook-url and --hook-module')
  }
  const warn = (line: string): void => {
    io.err(line)
  }
  const object = readController(opts.controller)
  let failed: number
  if (object.kind === 'DecoratorController') {
    const spec = parseSpec(opts.controller, object, parseDecoratorControllerSpec)
    const inputs = readInputs(opts, spec.resources, spec.attachments, 'attachments', warn)
    let result
    try {
      result = await syncDecoratorOffline(inputs, opts, { object, spec }, warn)
    } catch (error) {
      if (!(error instanceof NothingPlannedError)) throw error
      printNothingPlanned(io, opts, error.message)
      return
    }
    if (opts.diff === true) for (const line of formatDiff(result.printed.entries)) io.out(line)
    else if (opts.output === 'json') io.out(formatDecoratorJson(result))
    else for (const line of formatDecoratorText(result)) io.out(line)
    failed = result.printed.entries.filter((e) => e.op === 'fail').length
  } else {
    const spec = parseSpec(opts.controller, object, parseCompositeControllerSpec)
    const inputs = readInputs(
      opts,
      [spec.parentResource],
      spec.childResources,
      'childResources',
      warn,
      // ControllerRevisions are the rollout's input, not children.
      isControllerRevision
    )
    const result = await syncCompositeOffline(inputs, opts, { object, spec }, warn)
    if (opts.diff === true) for (const line of formatDiff(result.printed.entries)) io.out(line)
    else if (opts.output === 'json') io.out(formatCompositeJson(result))
    else for (const line of formatCompositeText(result)) io.out(line)
    failed = result.printed.entries.filter((e) => e.op === 'fail').length
  }
  if (failed > 0) {
    throw new CliError(
      `${failed} child${failed === 1 ? '' : 'ren'} cannot be written; see the plan`
    )
  }
}

/** Builds `metactl render`. */
export function renderCommand(io: CliIo): Command {
  return new Command('render')
    .description(
      "run a sync hook offline for a parent (or a decorator's target) and print the desired " +
        'children (attachments) and the plan against the observed ones (no cluster needed)'
    )
    .requiredOption(
      '--controller <file>',
      'CompositeController or DecoratorController manifest (YAML or JSON)'
    )
    .requiredOption('--parent <file>', "parent object manifest (a DecoratorController's target)")
    .option(
      '--observed <files...>',
      'observed children or attachments, multi-document YAML or a List (repeatable); claimed as ' +
        'the engine would'
    )
    .option(
      '--related <files...>',
      "objects the customize hook selects related objects from (repeatable): the module's " +
        'customize hook is called offline and its rules select among these, as the engine would'
    )
    .option(
      '--crd <files...>',
      'CustomResourceDefinitions (repeatable): the parent is validated against its schema, and ' +
        'child kinds and scopes come from them'
    )
    .option('--hook-url <url>', 'call the hook at this URL, with the hooks.sync.version protocol')
    .option(
      '--hook-module <path[#export]>',
      'import a .ts/.js module and call its hooks, found as metactl dev finds them: the export ' +
        "named after the controller's metadata.name in camelCase ({ sync, finalize?, " +
        'customize? }), else the top-level sync/finalize/customize, else default; #export picks ' +
        'an export (a function, or such an object)'
    )
    .addOption(
      new Option('--output <format>', 'output format').choices(['yaml', 'json']).default('yaml')
    )
    .option('--finalizing', 'send finalizing: true (calls the finalize export of a module)')
    .option('--diff', 'print a diff per child between observed and what the engine would write')
    .addHelpText(
      'after',
      [
        '',
        'The output is a YAML stream of the desired children, with the plan (create, update,',
        'recreate, delete, unchanged, skip) and the hook status as comments; --output json prints',
        'one object {desired, plan, status, resyncAfterSeconds, finalized}. The children are',
        'printed as the engine leaves them (last-applied annotation, controller reference), so the',
        'output can be fed back as --observed. --diff prints the changed lines per child instead.',
        "It runs the engine's sync over an in-memory cluster holding the files given; --observed",
        'takes kubectl List output, and a parent without uid takes the one its children name.',
        '',
        'Examples:',
        '  metactl render --controller cc.yaml --parent parent.yaml --hook-module ./hook.ts',
        '  metactl render --controller cc.yaml --parent parent.yaml --observed children.yaml \\',
        '    --hook-url http://127.0.0.1:8080/sync --output json',
      ].join('\n')
    )
    .action(async (opts: RenderOptions) => {
      try {
        await render(io, opts)
      } catch (error) {
        // The offline layer words its errors for the user, as the command line's own.
        if (error instanceof OfflineError) throw new CliError(error.message)
        throw error
      }
    })
}
