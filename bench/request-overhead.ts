// The client's CPU per JSON request: undici's `request` (a Readable body, an AsyncResource per
// request) against `requestBuffered` (src/kube/buffered-request.ts: `dispatch` and a handler that
// collects the chunks), both answered by a loopback Node server with a 1 KiB JSON body, N
// requests at 5 in flight after 2,000 to warm up. The CPU is this process's, server included
// (the same for both), so the difference between the two is the client's.
//
//   node --no-opt --import tsx bench/request-overhead.ts [requests=20000] [rounds=3]
//
// `--no-opt` as `metactl run` has it (bin/metactl.js); leave it out to measure with TurboFan.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { requestBuffered } from '../src/kube/buffered-request.js'
import { Agent, request } from '../src/kube/undici-core.js'

const COUNT = Number(process.argv[2] ?? 20000)
const ROUNDS = Number(process.argv[3] ?? 3)
const answer = JSON.stringify({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'p-1-a', namespace: 'bench', labels: { app: 'bench' } },
  data: { payload: 'x'.repeat(800) },
})
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer))
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const agent = new Agent({ keepAliveTimeout: 30_000 })
const send = {
  path: '/x',
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: '{"kind":"ConfigMap"}',
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
}

const ways: Record<string, () => Promise<unknown>> = {
  request: async () => {
    const response = await request(origin + send.path, {
      ...send,
      dispatcher: agent,
      signal: new AbortController().signal,
    })
    return JSON.parse(await response.body.text()) as unknown
  },
  requestBuffered: async () => {
    const response = await requestBuffered(agent, {
      ...send,
      origin,
      signal: new AbortController().signal,
    })
    return JSON.parse(response.body.toString('utf8')) as unknown
  },
}

async function run(count: number, call: () => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next++ < count) await call()
  }
  await Promise.all(Array.from({ length: 5 }, worker))
}

for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, call] of Object.entries(ways)) {
    await run(2000, call)
    const cpu = process.cpuUsage()
    const started = performance.now()
    await run(COUNT, call)
    const used = process.cpuUsage(cpu)
    console.log(
      `round ${round} ${name}: ${((used.user + used.system) / COUNT).toFixed(1)} µs CPU and ` +
        `${(((performance.now() - started) / COUNT) * 1000).toFixed(0)} µs wall per request`
    )
  }
}
await agent.close()
server.close()
