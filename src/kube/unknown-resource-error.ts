/**
 * Reports that API discovery does not know a kind or resource, even after a fresh refresh.
 *
 * @remarks
 * The message names what was asked for and says the likely cause (a CRD that is not installed or
 * not yet Established), plus what discovery does know about the group when that helps: the
 * versions it serves, or that its group-version is currently unavailable. A caller that may see
 * the resource appear later (a controller whose CRD is being installed) should retry with
 * back-off rather than fail for good.
 */
export class UnknownResourceError extends Error {
  override readonly name = 'UnknownResourceError'
  /** The `apiVersion` asked for. */
  readonly apiVersion: string
  /** The kind asked for, when the lookup was by kind. */
  readonly kind: string | undefined
  /** The resource asked for (`widgets`, `pods/status`), when the lookup was by resource. */
  readonly resource: string | undefined

  /** Creates the error; `detail` is appended to the message when given. */
  constructor(
    target: { readonly apiVersion: string } & (
      | { readonly kind: string; readonly resource?: undefined }
      | { readonly resource: string; readonly kind?: undefined }
    ),
    detail?: string,
    options?: ErrorOptions
  ) {
    const what =
      target.kind === undefined
        ? `resource "${target.resource}" in apiVersion "${target.apiVersion}"`
        : `kind "${target.kind}" in apiVersion "${target.apiVersion}"`
    super(
      `API discovery does not know ${what}: the CustomResourceDefinition may not be installed or ` +
        `not yet Established, or the API group is not served by this cluster` +
        (detail === undefined || detail === '' ? '' : ` (${detail})`),
      options
    )
    this.apiVersion = target.apiVersion
    this.kind = target.kind
    this.resource = target.resource
  }
}
