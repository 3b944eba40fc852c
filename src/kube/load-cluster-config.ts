/**
 * Where the engine's cluster configuration comes from, in controller-runtime's order: an explicit
 * kubeconfig, `KUBECONFIG`, the in-cluster service account, then `~/.kube/config`. Parsing
 * (`parse-kubeconfig.ts`), resolving a context into credentials (`resolve-kubeconfig.ts`) and the
 * in-cluster files (`load-in-cluster-config.ts`) live beside it.
 *
 * @module
 */
import { homedir } from 'node:os'
import path from 'node:path'
import type { ClusterConfig } from './cluster-config.js'
import { KubeconfigError } from './kubeconfig-error.js'
import { describeFsError, readOptional, readUtf8 } from './read-text-file.js'
import type { ReadTextFile } from './read-text-file.js'
import { SERVICE_ACCOUNT_DIR, loadInClusterConfig } from './load-in-cluster-config.js'
import type { Kubeconfig } from './kubeconfig.js'
import { resolveKubeconfig } from './resolve-kubeconfig.js'
import type { ResolveKubeconfigOptions } from './resolve-kubeconfig.js'
import { mergeKubeconfigs, parseKubeconfig } from './parse-kubeconfig.js'

// `metactl run` reads the in-cluster directory to find its namespace.
export { SERVICE_ACCOUNT_DIR } from './load-in-cluster-config.js'

/** Options of {@link loadClusterConfig}; all of them exist for the CLI flags or for tests. */
export interface LoadClusterConfigOptions {
  /** Explicit kubeconfig path (`--kubeconfig`); it must exist and wins over everything else. */
  readonly kubeconfig?: string | undefined
  /** Context to use instead of the kubeconfig's `current-context` (`--context`). */
  readonly context?: string | undefined
  /** Environment to read `KUBECONFIG` and the in-cluster variables from; `process.env` by default. */
  readonly env?: NodeJS.ProcessEnv
  /** Home directory holding `.kube/config`; `os.homedir()` by default. */
  readonly homeDir?: string
  /** Reads files; `fs.readFile` as UTF-8 by default. */
  readonly readFile?: ReadTextFile
  /** Directory of the mounted service-account files; {@link SERVICE_ACCOUNT_DIR} by default. */
  readonly serviceAccountDir?: string
}

/**
 * Loads the cluster configuration the way controller-runtime does.
 *
 * @remarks
 * Precedence: the explicit `kubeconfig` path, then `$KUBECONFIG` (a path list merged with client-go
 * rules), then the in-cluster service account, then `~/.kube/config`. In-cluster is skipped when a
 * `context` is given, since only a kubeconfig has contexts. Every failure is a
 * {@link KubeconfigError} naming the file and context.
 */
export async function loadClusterConfig(
  options: LoadClusterConfigOptions = {}
): Promise<ClusterConfig> {
  const env = options.env ?? process.env
  const readFile = options.readFile ?? readUtf8
  const context = options.context === '' ? undefined : options.context
  const resolveOptions: ResolveKubeconfigOptions = { context, readFile }

  if (options.kubeconfig !== undefined && options.kubeconfig !== '') {
    const file = path.resolve(options.kubeconfig)
    const text = await readKubeconfigFile(file, readFile)
    if (text === undefined) {
      throw new KubeconfigError(`kubeconfig ${file}: file not found; check the --kubeconfig path`, {
        file,
      })
    }
    return resolveKubeconfig(parseKubeconfig(text, file), resolveOptions)
  }

  const list = env['KUBECONFIG']
  if (list !== undefined && list !== '') {
    const files = [
      ...new Set(
        list
          .split(path.delimiter)
          .filter((p) => p !== '')
          .map((p) => path.resolve(p))
      ),
    ]
    const configs: Kubeconfig[] = []
    for (const file of files) {
      // client-go skips missing entries so one KUBECONFIG can serve several machines.
      const text = await readKubeconfigFile(file, readFile)
      if (text !== undefined) configs.push(parseKubeconfig(text, file))
    }
    if (configs.length === 0) {
      throw new KubeconfigError(
        `kubeconfig ${list}: none of the files in KUBECONFIG exist; fix KUBECONFIG or pass --kubeconfig`,
        { file: list }
      )
    }
    return resolveKubeconfig(mergeKubeconfigs(configs), resolveOptions)
  }

  const tried = ['--kubeconfig (not given)', 'KUBECONFIG (not set)']
  if (context === undefined) {
    const inCluster = await loadInClusterConfig(
      env,
      options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR,
      readFile
    )
    if (typeof inCluster !== 'string') return inCluster
    tried.push(`in-cluster (${inCluster})`)
  } else {
    tried.push(`in-cluster (skipped: context "${context}" was given)`)
  }

  const homeFile = path.join(options.homeDir ?? homedir(), '.kube', 'config')
  const text = await readKubeconfigFile(homeFile, readFile)
  if (text !== undefined) return resolveKubeconfig(parseKubeconfig(text, homeFile), resolveOptions)
  tried.push(`${homeFile} (not found)`)

  throw new KubeconfigError(
    `no kubeconfig found: tried ${tried.join(', ')}; pass --kubeconfig or set KUBECONFIG`,
    context === undefined ? {} : { context }
  )
}

/** Reads a kubeconfig, or returns undefined when it does not exist. */
async function readKubeconfigFile(
  file: string,
  readFile: ReadTextFile
): Promise<string | undefined> {
  try {
    return await readOptional(file, readFile)
  } catch (error) {
    throw new KubeconfigError(`kubeconfig ${file}: cannot read: ${describeFsError(error)}`, {
      file,
      cause: error,
    })
  }
}
