// Properties of the CompositeController and DecoratorController spec parsers on generated and mutated specs.
import { describe, it } from 'node:test'
import { controllerSpecProperties, UNIT_RUN } from '../../test/support/decoder-properties.js'

describe('controller spec parsing (properties, fixed seed)', () => {
  for (const { name, check } of controllerSpecProperties) it(name, () => check(UNIT_RUN))
})
