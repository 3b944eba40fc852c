/**
 * The v2 hook protocol: uniform object keys, nothing filtered, `strict` decoding by default.
 *
 * @remarks
 * Namespaced objects are keyed `namespace/name` and cluster-scoped ones `name`, whatever the
 * parent's scope (upstream `UniformObjectMap`, spec §2.2).
 *
 * @module
 */
import { createHookCodec } from './hook-codec.js'
import type { HookCodec } from './hook-codec.js'
import { encodeUniformObjectMap } from './object-map.js'

/** The codec for hooks with `version: v2`. */
export const v2Codec: HookCodec = createHookCodec({
  version: 'v2',
  defaultMode: 'strict',
  encodeObjectMap: encodeUniformObjectMap,
})
