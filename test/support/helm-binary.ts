// The helm that `make helm` (tools/helm/build.sh) builds, for the chart tests: its path, or the
// reason to skip when it is not built, and the chart they render.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The version tools/helm/build.sh builds. */
export const HELM_VERSION = 'v4.3.2'

/** `$HELM_BIN`, else the build script's cache path. */
export const HELM: string =
  process.env['HELM_BIN'] ??
  join(
    process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'),
    'metacontroller-ts',
    'helm',
    HELM_VERSION,
    'helm'
  )

/** `false` when helm is built; otherwise why the chart tests skip, naming the command to run. */
export const HELM_SKIP: string | false = existsSync(HELM)
  ? false
  : `helm ${HELM_VERSION} is not built (looked for ${HELM}); run tools/helm/build.sh`

/** Our chart, relative to the repository. */
export const CHART = 'deploy/helm/metacontroller-ts'
