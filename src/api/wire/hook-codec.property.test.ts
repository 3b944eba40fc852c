// Properties of the v1 and v2 hook response decoders on generated and mutated bodies.
import { describe, it } from 'node:test'
import { hookResponseProperties, UNIT_RUN } from '../../../test/support/decoder-properties.js'

describe('hook response decoding (properties, fixed seed)', () => {
  for (const { name, check } of hookResponseProperties) it(name, () => check(UNIT_RUN))
})
