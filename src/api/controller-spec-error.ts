/** Raised for a CompositeController or DecoratorController spec the engine cannot run. */
export class ControllerSpecError extends Error {
  override readonly name = 'ControllerSpecError'
  /** Dot path of the offending field, e.g. `spec.hooks.sync.webhook`. */
  readonly field: string
  constructor(field: string, message: string) {
    super(`${field}: ${message}`)
    this.field = field
  }
}
