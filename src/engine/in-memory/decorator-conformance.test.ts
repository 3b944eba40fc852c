import { runConformanceSuite } from './conformance.js'
import { decoratorAdapter } from './decorator-adapter.js'

runConformanceSuite(decoratorAdapter())
