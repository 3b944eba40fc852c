// Serves the PodService sync hook as a webhook at POST /sync (and GET /healthz), for
// controller.yaml: `node --import tsx examples/podservice/server.ts`, or the image built from
// the Dockerfile next to this file.
//
//   PORT  port to listen on (8080; 0 picks a free one)
//   HOST  address to listen on (127.0.0.1; the image sets 0.0.0.0)
//
// SIGTERM and SIGINT stop accepting requests, let in-flight ones finish, and exit 0.
import { serveHooks } from 'metacontroller-ts'
import { sync } from './hook.js'

function portFromEnv(text: string | undefined): number {
  if (text === undefined || text === '') return 8080
  const port = Number(text)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer from 0 to 65535, not "${text}"`)
  }
  return port
}

function log(msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg, ...fields })}\n`
  )
}

try {
  const host = process.env['HOST'] ?? '127.0.0.1'
  const server = await serveHooks(
    { '/sync': sync },
    { port: portFromEnv(process.env['PORT']), host }
  )
  log('podservice hook listening', { url: `${server.url}/sync` })
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return
    stopping = true
    log('stopping', { signal })
    void server.close().then(() => {
      log('stopped')
      process.exit(0)
    })
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
} catch (error) {
  process.stderr.write(
    `podservice hook: cannot start: ${error instanceof Error ? error.message : String(error)}\n`
  )
  process.exit(1)
}
