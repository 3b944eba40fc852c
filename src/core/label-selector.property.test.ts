// Properties of label and annotation selectors: compiling, parsing, formatting and matching.
import { describe, it } from 'node:test'
import { labelSelectorProperties, UNIT_RUN } from '../../test/support/decoder-properties.js'

describe('label and annotation selectors (properties, fixed seed)', () => {
  for (const { name, check } of labelSelectorProperties) it(name, () => check(UNIT_RUN))
})
