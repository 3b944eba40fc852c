// Serves the NetworkPolicy decorator's sync hook as a webhook at POST /sync (and GET /healthz),
// for decorator.yaml: `node --import tsx examples/podservice-netpol/server.ts`.
//
//   PORT  port to listen on (8082; 0 picks a free one)
//   HOST  address to listen on (127.0.0.1)
//
// SIGTERM and SIGINT stop accepting requests, let in-flight ones finish, and exit 0.
import { serveHooks } from 'metacontroller-ts'
import { sync } from './hook.js'

function portFromEnv(text: string | undefined): number {
  // 8082: the PodService hook (examples/podservice/server.ts) listens on 8080 and `metactl run`
  // serves its health probes on 8081.
  if (text === undefined || text === '') return 8082
  const port = Number(text)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer from 0 to 65535, not "${text}"`)
  }
  return port
}

try {
  const server = await serveHooks(
    { '/sync': sync },
    { port: portFromEnv(process.env['PORT']), host: process.env['HOST'] ?? '127.0.0.1' }
  )
  process.stderr.write(`podservice-netpol hook listening on ${server.url}/sync\n`)
  const stop = (): void => {
    void server.close().then(() => process.exit(0))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
} catch (error) {
  process.stderr.write(
    `podservice-netpol hook: cannot start: ${error instanceof Error ? error.message : String(error)}\n`
  )
  process.exit(1)
}
