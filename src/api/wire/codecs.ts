/**
 * Picks the codec of a hook's protocol version.
 *
 * @module
 */
import type { HookVersion } from '../hook-model.js'
import type { HookCodec } from './hook-codec.js'
import { v1Codec } from './v1.js'
import { v2Codec } from './v2.js'

/**
 * Returns the codec for `hooks.<hook>.version`: v2 for `v2`, otherwise v1 (absent or empty
 * means v1, as upstream).
 */
export function hookCodec(version: HookVersion | '' | undefined): HookCodec {
  return version === 'v2' ? v2Codec : v1Codec
}
