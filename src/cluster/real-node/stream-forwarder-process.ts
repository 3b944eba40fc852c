/**
 * Entry point of a forwarder process: `node stream-forwarder-process.js FROM TO` (endpoints as
 * {@link parseEndpoint} reads them). Runs until it is signalled.
 *
 * @module
 */
import { parseEndpoint, startForwarder } from './stream-forwarder.js'

const [from, to] = process.argv.slice(2)
if (from === undefined || to === undefined) {
  console.error('usage: stream-forwarder-process FROM TO   (tcp:HOST:PORT or unix:PATH)')
  process.exit(2)
}
try {
  await startForwarder(parseEndpoint(from), parseEndpoint(to))
  console.log(`forwarding ${from} -> ${to}`)
} catch (error) {
  console.error(
    `cannot forward ${from} -> ${to}: ${error instanceof Error ? error.message : String(error)}`
  )
  process.exit(1)
}
