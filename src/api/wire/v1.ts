/**
 * The v1 hook protocol: object maps relative to the parent, `loose` decoding by default.
 *
 * @remarks
 * For a namespaced parent, objects outside its namespace (cluster-scoped ones included) are not
 * sent, and keys are bare names; for a cluster-scoped parent, namespaced objects are keyed
 * `namespace/name` (upstream `RelativeObjectMap`, spec §2.2).
 *
 * @module
 */
import { createHookCodec } from './hook-codec.js'
import type { HookCodec } from './hook-codec.js'
import { encodeRelativeObjectMap } from './object-map.js'

/** The codec for hooks with `version: v1` (or no version). */
export const v1Codec: HookCodec = createHookCodec({
  version: 'v1',
  defaultMode: 'loose',
  encodeObjectMap: encodeRelativeObjectMap,
})
