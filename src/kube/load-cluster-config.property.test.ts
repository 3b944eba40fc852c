// Properties of kubeconfig parsing and resolution on generated, mutated and arbitrary text.
import { describe, it } from 'node:test'
import { kubeconfigProperties, UNIT_RUN } from '../../test/support/decoder-properties.js'

// YAML parsing is the slow part (about 10 ms a case on a busy machine): fewer cases here, and
// many more in bench/property-fuzz.ts.
const RUN = { ...UNIT_RUN, numRuns: 50 }

describe('kubeconfig loading (properties, fixed seed)', () => {
  for (const { name, check } of kubeconfigProperties) it(name, () => check(RUN))
})
