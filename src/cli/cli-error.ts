/** An error meant for the person at the terminal: printed without a stack, exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError'
  /** Process exit code (1). */
  readonly exitCode: number
  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}
