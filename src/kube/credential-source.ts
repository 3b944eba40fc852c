import type { ClusterConfig, CredentialSource } from './cluster-config.js'
import { ExecCredentials, execClusterInfo } from './exec-credentials.js'
import { StaticCredentials } from './static-credentials.js'
import { TokenFileCredentials } from './token-file-credentials.js'

/** Clock, file reader, environment and limits shared by the credential sources; all optional. */
export interface CredentialSourceDeps {
  /** Current time in milliseconds; `Date.now` by default. */
  readonly now?: () => number
  /** Reads a token file as UTF-8; `fs.readFile` by default. */
  readonly readFile?: (filePath: string) => Promise<string>
  /** Environment an exec plugin inherits under its kubeconfig `env`; `process.env` by default. */
  readonly env?: NodeJS.ProcessEnv
  /** How long an exec plugin may run; 60 s by default. */
  readonly execTimeoutMs?: number
}

/**
 * Creates the {@link CredentialSource} for a cluster config's `auth`.
 *
 * @remarks
 * The returned source is meant to live as long as the transport using it: it holds the caches
 * that keep token files from being re-read and exec plugins from being re-run on every request.
 */
export function createCredentialSource(
  config: ClusterConfig,
  deps: CredentialSourceDeps = {}
): CredentialSource {
  const { auth } = config
  switch (auth.type) {
    case 'none':
      return StaticCredentials.none()
    case 'token':
      return StaticCredentials.bearer(auth.token)
    case 'basic':
      return StaticCredentials.basic(auth.username, auth.password)
    case 'tokenFile':
      return new TokenFileCredentials(auth.path, {
        ...(deps.now === undefined ? {} : { now: deps.now }),
        ...(deps.readFile === undefined ? {} : { readFile: deps.readFile }),
      })
    case 'exec':
      return new ExecCredentials(auth.exec, {
        cluster: execClusterInfo(config),
        ...(deps.now === undefined ? {} : { now: deps.now }),
        ...(deps.env === undefined ? {} : { env: deps.env }),
        ...(deps.execTimeoutMs === undefined ? {} : { timeoutMs: deps.execTimeoutMs }),
      })
  }
}
