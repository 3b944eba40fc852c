import { spawn } from 'node:child_process'

import { isJsonObject } from '../core/kube-object.js'
import { isValidHeaderValue } from './header-value.js'
import type {
  ClusterConfig,
  CredentialSource,
  ExecConfig,
  RequestCredential,
} from './cluster-config.js'

/** How long an exec plugin may run before it is killed. */
export const EXEC_TIMEOUT_MS = 60_000

/** How long before its expiry an exec credential is refreshed, so no request races the expiry. */
export const EXEC_EXPIRY_MARGIN_MS = 10_000

/** The most stdout we accept from a plugin; an ExecCredential is a few kilobytes at most. */
const MAX_STDOUT_BYTES = 1024 * 1024

/** How much of the plugin's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000

/** The `spec.cluster` block of `KUBERNETES_EXEC_INFO`, with client-go's JSON field names. */
export interface ExecClusterInfo {
  readonly server: string
  readonly 'tls-server-name'?: string
  readonly 'insecure-skip-tls-verify'?: boolean
  /** Base64 of the PEM CA bundle. */
  readonly 'certificate-authority-data'?: string
}

/** Injectable dependencies and limits of {@link ExecCredentials}. */
export interface ExecCredentialsOptions {
  /** Cluster block passed to the plugin when the kubeconfig sets `provideClusterInfo`. */
  readonly cluster?: ExecClusterInfo
  /** Base environment the kubeconfig's `env` is merged over; `process.env` by default. */
  readonly env?: NodeJS.ProcessEnv
  /** Current time in milliseconds; `Date.now` by default. */
  readonly now?: () => number
  /** Overrides {@link EXEC_TIMEOUT_MS}. */
  readonly timeoutMs?: number
  /** Overrides {@link EXEC_EXPIRY_MARGIN_MS}. */
  readonly expiryMarginMs?: number
}

/** Reports an exec credential plugin that could not be run or returned no usable credential. */
export class ExecCredentialError extends Error {
  override readonly name = 'ExecCredentialError'
  /** The plugin command as configured in the kubeconfig. */
  readonly command: string

  /** Creates the error; `message` already names the command and says how to fix the problem. */
  constructor(command: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.command = command
  }
}

/**
 * Builds the `KUBERNETES_EXEC_INFO` cluster block from a cluster config.
 *
 * @remarks
 * The CA travels base64-encoded, as `certificate-authority-data` does in a kubeconfig.
 */
export function execClusterInfo(config: ClusterConfig): ExecClusterInfo {
  return {
    server: config.server,
    ...(config.tlsServerName === undefined ? {} : { 'tls-server-name': config.tlsServerName }),
    ...(config.insecureSkipTlsVerify === true ? { 'insecure-skip-tls-verify': true } : {}),
    ...(config.caPem === undefined
      ? {}
      : { 'certificate-authority-data': Buffer.from(config.caPem, 'utf8').toString('base64') }),
  }
}

/**
 * Supplies credentials from a client-go exec credential plugin (`client.authentication.k8s.io`).
 *
 * @remarks
 * The credential is cached until shortly before its `expirationTimestamp` (forever when it has
 * none) or until {@link ExecCredentials.invalidate}. Concurrent callers share one plugin run, so a
 * burst of requests or of 401s costs one spawn. A run in flight is never discarded by
 * `invalidate()`: it started after the rejected credential was cached, so its result is newer.
 */
export class ExecCredentials implements CredentialSource {
  readonly #exec: ExecConfig
  readonly #cluster: ExecClusterInfo | undefined
  readonly #env: NodeJS.ProcessEnv
  readonly #now: () => number
  readonly #timeoutMs: number
  readonly #marginMs: number
  #cached: { readonly credential: RequestCredential; readonly expiresAt: number } | undefined
  #running: Promise<RequestCredential> | undefined

  /** Creates a source for one kubeconfig exec block; the plugin first runs on the first request. */
  constructor(exec: ExecConfig, options: ExecCredentialsOptions = {}) {
    this.#exec = exec
    this.#cluster = options.cluster
    this.#env = options.env ?? process.env
    this.#now = options.now ?? Date.now
    this.#timeoutMs = options.timeoutMs ?? EXEC_TIMEOUT_MS
    this.#marginMs = options.expiryMarginMs ?? EXEC_EXPIRY_MARGIN_MS
  }

  /**
   * Returns the cached credential, or runs the plugin when there is none or it is about to expire.
   *
   * @remarks
   * Aborting `signal` abandons this caller's wait only; the shared run continues for the others.
   */
  current(signal?: AbortSignal): Promise<RequestCredential> {
    const cached = this.#cached
    if (cached !== undefined && this.#now() < cached.expiresAt - this.#marginMs) {
      return Promise.resolve(cached.credential)
    }
    if (this.#running === undefined) {
      const running = this.#run().finally(() => {
        this.#running = undefined
      })
      // Every caller may have aborted; the failure is theirs to see, not an unhandled rejection.
      running.catch(() => undefined)
      this.#running = running
    }
    return abortable(this.#running, signal)
  }

  /** Drops the cached credential so the next request runs the plugin again. */
  invalidate(): void {
    this.#cached = undefined
  }

  async #run(): Promise<RequestCredential> {
    const { command, apiVersion } = this.#exec
    if (this.#exec.interactiveMode === 'Always') {
      throw new ExecCredentialError(
        command,
        `exec credential plugin "${command}" requires an interactive terminal (interactiveMode: Always), which a controller never has; set interactiveMode to IfAvailable or Never, or use a non-interactive login`
      )
    }
    const info = {
      apiVersion,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        ...(this.#exec.provideClusterInfo && this.#cluster !== undefined
          ? { cluster: this.#cluster }
          : {}),
      },
    }
    const env: NodeJS.ProcessEnv = {
      ...this.#env,
      ...Object.fromEntries(this.#exec.env.map((e) => [e.name, e.value])),
      KUBERNETES_EXEC_INFO: JSON.stringify(info),
    }
    const stdout = await runPlugin(this.#exec, env, this.#timeoutMs)
    const { credential, expiresAt } = parseExecCredential(stdout, this.#exec)
    this.#cached = { credential, expiresAt }
    return credential
  }
}

/** Runs the plugin without a shell or stdin and resolves with its stdout when it exits 0. */
function runPlugin(exec: ExecConfig, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  const { command } = exec
  return new Promise((resolve, reject) => {
    let settled = false
    const finish = (error: ExecCredentialError | undefined, stdout = ''): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error === undefined) resolve(stdout)
      else reject(error)
    }

    const child = spawn(command, exec.args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const stdoutChunks: Buffer[] = []
    let stdoutBytes = 0
    let stderr = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      finish(
        new ExecCredentialError(
          command,
          `exec credential plugin "${command}" did not finish within ${timeoutMs / 1000} s and was killed; check that it does not wait for input${stderrTail(stderr)}`
        )
      )
    }, timeoutMs)

    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        child.kill('SIGKILL')
        finish(
          new ExecCredentialError(
            command,
            `exec credential plugin "${command}" printed more than ${MAX_STDOUT_BYTES} bytes; it must print one ExecCredential object`
          )
        )
        return
      }
      stdoutChunks.push(chunk)
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      // Keep only the tail: the last lines of a failing plugin say what went wrong.
      stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS)
    })

    child.on('error', (error: NodeJS.ErrnoException) => {
      finish(spawnError(exec, error))
    })
    child.on('close', (code, signal) => {
      if (code === 0) {
        finish(undefined, Buffer.concat(stdoutChunks).toString('utf8'))
        return
      }
      const how =
        code === null ? `was killed by ${signal ?? 'a signal'}` : `exited with code ${code}`
      finish(
        new ExecCredentialError(
          command,
          `exec credential plugin "${command}" ${how}${stderrTail(stderr)}`
        )
      )
    })
  })
}

/** Explains why the plugin could not be started, quoting the kubeconfig's install hint. */
function spawnError(exec: ExecConfig, error: NodeJS.ErrnoException): ExecCredentialError {
  const { command } = exec
  const hint =
    exec.installHint === undefined
      ? 'install it or fix users[].user.exec.command in the kubeconfig'
      : exec.installHint.trim()
  if (error.code === 'ENOENT') {
    return new ExecCredentialError(
      command,
      `exec credential plugin "${command}" was not found (looked up on PATH unless it is a path); ${hint}`,
      { cause: error }
    )
  }
  if (error.code === 'EACCES') {
    return new ExecCredentialError(
      command,
      `exec credential plugin "${command}" is not executable (EACCES); chmod +x it or ${hint}`,
      { cause: error }
    )
  }
  return new ExecCredentialError(
    command,
    `exec credential plugin "${command}" could not be started: ${error.message}`,
    { cause: error }
  )
}

/** Validates the plugin's stdout as an ExecCredential of the configured API version. */
function parseExecCredential(
  stdout: string,
  exec: ExecConfig
): { credential: RequestCredential; expiresAt: number } {
  const { command, apiVersion } = exec
  const fail = (detail: string): ExecCredentialError =>
    new ExecCredentialError(command, `exec credential plugin "${command}" ${detail}`)
  let body: unknown
  try {
    body = JSON.parse(stdout)
  } catch {
    // Neither stdout nor V8's parse message (which quotes it) is repeated: it may be a credential
    // in a format we failed to parse.
    throw fail(
      `printed invalid JSON on stdout (${Buffer.byteLength(stdout)} bytes); it must print one ExecCredential object`
    )
  }
  if (!isJsonObject(body)) throw fail('printed JSON that is not an ExecCredential object')
  if (body['kind'] !== 'ExecCredential') {
    throw fail(`returned kind ${describe(body['kind'])}, expected ExecCredential`)
  }
  if (body['apiVersion'] !== apiVersion) {
    throw fail(
      `returned apiVersion ${describe(body['apiVersion'])}, but the kubeconfig asks for "${apiVersion}"; make exec.apiVersion match the plugin`
    )
  }
  const status = body['status']
  if (!isJsonObject(status)) throw fail('returned an ExecCredential without a status')

  const token = optionalString(status, 'token')
  const certPem = optionalString(status, 'clientCertificateData')
  const keyPem = optionalString(status, 'clientKeyData')
  const expiry = optionalString(status, 'expirationTimestamp')
  if (token === null || certPem === null || keyPem === null || expiry === null) {
    throw fail(
      'returned a status whose token, clientCertificateData, clientKeyData or expirationTimestamp is not a string'
    )
  }
  if ((certPem === undefined) !== (keyPem === undefined)) {
    throw fail('returned only one of status.clientCertificateData and status.clientKeyData')
  }
  if (token !== undefined && !isValidHeaderValue(token)) {
    throw fail(
      'returned a status.token with a line break, a control character or a character beyond Latin-1, which an HTTP header cannot carry'
    )
  }
  if (token === undefined && certPem === undefined) {
    throw fail('returned neither status.token nor status.clientCertificateData and clientKeyData')
  }
  let expiresAt = Number.POSITIVE_INFINITY
  if (expiry !== undefined) {
    expiresAt = Date.parse(expiry)
    if (Number.isNaN(expiresAt)) {
      throw fail(`returned an invalid status.expirationTimestamp ${JSON.stringify(expiry)}`)
    }
  }
  return {
    credential: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(certPem === undefined || keyPem === undefined
        ? {}
        : { clientCertPem: certPem, clientKeyPem: keyPem }),
    },
    expiresAt,
  }
}

/** Reads an optional string field: undefined when absent or empty, null when of another type. */
function optionalString(record: Record<string, unknown>, key: string): string | undefined | null {
  const value = record[key]
  if (value === undefined || value === null || value === '') return undefined
  return typeof value === 'string' ? value : null
}

function describe(value: unknown): string {
  return value === undefined ? 'none' : JSON.stringify(value)
}

function stderrTail(stderr: string): string {
  const tail = stderr.trim()
  return tail === '' ? ' (no stderr output)' : `: ${tail}`
}

/** Lets one caller stop waiting on a shared promise without cancelling it for the others. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      const reason: unknown = signal.reason
      reject(reason instanceof Error ? reason : new Error('aborted', { cause: reason }))
    }
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(
          error instanceof Error ? error : new Error('exec credential failed', { cause: error })
        )
      }
    )
  })
}
