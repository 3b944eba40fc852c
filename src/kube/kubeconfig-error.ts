/** Where a {@link KubeconfigError} arose and what caused it. */
export interface KubeconfigErrorOptions {
  /** The kubeconfig file (or `KUBECONFIG`-style path list) at fault, when there is one. */
  readonly file?: string
  /** The context being resolved when the problem was found. */
  readonly context?: string
  /** The underlying error, such as a file system or YAML parse error. */
  readonly cause?: unknown
}

/**
 * Reports a kubeconfig or in-cluster configuration that cannot be turned into a cluster config.
 *
 * @remarks
 * The message is meant to be shown as is: it names the file, the context and what is wrong, and
 * ends with a hint on how to fix it. {@link KubeconfigError.file} and
 * {@link KubeconfigError.context} repeat the first two for callers that want to branch on them.
 */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError'
  /** The kubeconfig file (or path list) at fault; absent when no file was found at all. */
  readonly file: string | undefined
  /** The context being resolved; absent when the problem precedes context selection. */
  readonly context: string | undefined

  /** Creates the error; `message` is expected to already name the file and context. */
  constructor(message: string, options: KubeconfigErrorOptions = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined)
    this.file = options.file
    this.context = options.context
  }
}
