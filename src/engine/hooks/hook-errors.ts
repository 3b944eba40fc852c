/** Raised when a hook cannot be called or answers with anything but a usable 200. */
export class HookCallError extends Error {
  override readonly name = 'HookCallError'
  /** The hook's URL, or `in-process:<name>` for a TypeScript hook. */
  readonly target: string
  constructor(target: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.target = target
  }
}
