// The image archives `make examples` writes (tools/node/example-images.sh): nginx, busybox and
// jsonnetd, in the cache directory named after their versions, or where METACTL_EXAMPLE_IMAGES says.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The path of `<name>.tar` among the example images; throws naming `make examples` if absent. */
export function exampleImageArchive(
  name: 'nginx' | 'busybox' | 'jsonnetd',
  env: NodeJS.ProcessEnv = process.env
): string {
  const cache = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  const dir =
    env['METACTL_EXAMPLE_IMAGES'] ??
    join(
      cache,
      'metacontroller-ts',
      'controlplane',
      'example-images-nginx-deb12-busybox-jsonnetd-1'
    )
  const archive = join(dir, `${name}.tar`)
  if (!existsSync(archive)) throw new Error(`${archive} missing: run \`make examples\` first`)
  return archive
}
