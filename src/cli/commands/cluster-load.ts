/**
 * `metactl cluster load <archive|image>…`: loads images into a running cluster's real node, as
 * `kind load` does for kind, so a rebuilt hook needs no `down` and `up`.
 *
 * @module
 */
import { resolve } from 'node:path'
import type { Command, Option } from 'commander'
import { ImageBuildError } from '../../cluster/images/image-builder.js'
import {
  classifyLoadSources,
  ImageLoadError,
  isRegularFile,
  loadImages,
} from '../../cluster/images/load-images.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'

/** Runs `cluster load` on its arguments; every expected failure is a {@link CliError}. */
export async function clusterLoad(io: CliIo, dir: string, args: readonly string[]): Promise<void> {
  try {
    const sources = classifyLoadSources(args, isRegularFile)
    const loaded = await loadImages({
      dir: resolve(dir),
      sources,
      onProgress: (line) => {
        io.err(`  ${line}`)
      },
    })
    for (const name of loaded) io.out(`loaded ${name}`)
  } catch (error) {
    if (error instanceof ImageLoadError || error instanceof ImageBuildError) {
      throw new CliError(error.message)
    }
    throw error
  }
}

/** Adds `load` to `metactl cluster`; `dirOptions` are the cluster's `--cluster-dir` (and `--dir`). */
export function addLoadCommand(
  cluster: Command,
  io: CliIo,
  dirOptions: () => readonly Option[]
): Command {
  const load = cluster
    .command('load')
    .description("load images into the running cluster's real node (no restart), like `kind load`")
    .argument(
      '[archive|image...]',
      'an image archive (docker save, tools/images/build.sh) or an image of the builder'
    )
  for (const option of dirOptions()) load.addOption(option)
  return load
    .addHelpText(
      'after',
      [
        '',
        'A file is imported as an image archive; any other argument names an image built by',
        'tools/images/build.sh, exported from its store. The images go to every real node of',
        '`metactl cluster up --runtime containerd`. A Pod pulls an image without a tag, or tagged',
        '`latest`, on every start: give your images a tag of their own (e.g. `my-hook:dev`).',
      ].join('\n')
    )
    .action(async (args: string[], opts: { dir: string }) => {
      await clusterLoad(io, opts.dir, args)
    })
}
