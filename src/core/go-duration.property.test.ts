// Properties of the Go duration parser against Go's own printed form and range.
import { describe, it } from 'node:test'
import { goDurationProperties, UNIT_RUN } from '../../test/support/decoder-properties.js'

describe('parseGoDuration (properties, fixed seed)', () => {
  for (const { name, check } of goDurationProperties) it(name, () => check(UNIT_RUN))
})
