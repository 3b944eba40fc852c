// Runs an upstream example's Node.js hooks unchanged on the host, as the example's
// metacontroller/nodejs-server container would: a POST to /NAME calls the function NAME.js (from
// the hooks volume) exports, with `{ request: { body } }`, and answers with the `{ status, body,
// headers }` it returns. Serves loopback only.
//   argv[2]  the local copy of the hooks volume
//   argv[3]  the local port standing in for the container port
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

type Hook = (context: {
  request: { body: unknown }
}) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>

const [hooksDir = '.', port = '0'] = process.argv.slice(2)
const load = createRequire(join(hooksDir, 'hooks.js'))

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const file = join(hooksDir, `${(req.url ?? '/').slice(1)}.js`)
    if (req.method !== 'POST' || !/^\/[\w.-]+$/.test(req.url ?? '') || !existsSync(file)) {
      res.writeHead(404).end()
      return
    }
    void (async () => {
      try {
        const hook = load(file) as Hook
        const reply = await hook({
          request: { body: JSON.parse(Buffer.concat(chunks).toString()) },
        })
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
        res.writeHead(reply.status, reply.headers ?? {}).end(text)
        console.log(`POST ${req.url ?? ''} ${reply.status}`)
      } catch (error) {
        res.writeHead(500).end(error instanceof Error ? error.stack : String(error))
      }
    })()
  })
})
server.listen(Number(port), '127.0.0.1', () => {
  console.log(`nodejs hooks from ${hooksDir} on 127.0.0.1:${port}`)
})
