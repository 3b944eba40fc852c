import { compositeAdapter } from './composite-adapter.js'
import { runConformanceSuite } from './conformance.js'

runConformanceSuite(compositeAdapter({ generateSelector: false }))
runConformanceSuite(compositeAdapter({ generateSelector: true }))
