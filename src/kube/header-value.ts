/**
 * Which strings an HTTP header value can carry.
 *
 * @module
 */

/** Control characters (tab aside) and characters beyond Latin-1, which undici refuses to send. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const UNSENDABLE = /[\u0000-\u0008\u000a-\u001f\u007f\u{100}-\u{10ffff}]/u

/**
 * Tells whether a string can be sent as an HTTP header value.
 *
 * @remarks
 * undici refuses the others with `invalid authorization header` on every request, so a
 * credential read from a kubeconfig or an exec plugin is checked once, where the message can
 * name the file and field.
 */
export function isValidHeaderValue(value: string): boolean {
  return !UNSENDABLE.test(value)
}
