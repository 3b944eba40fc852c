// Runs inside a Pod sandbox's network namespace (test/support/pod-sandbox.ts), whose only
// interface is its own loopback: joins it to the host through Unix sockets, which live in the file
// system and so cross network namespaces.
//   tcp:PORT=PATH  listen on 127.0.0.1:PORT here, forward to the Unix socket PATH (host services)
//   unix:PATH=PORT listen on the Unix socket PATH, forward to 127.0.0.1:PORT here (the Pod's ports)
// Writes `<ready file>` once every listener is up; exits when the process that started it has gone
// (the sandbox's shell execs the container's program, which then is the parent).
import { writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import type { Socket } from 'node:net'

const [readyFile, ...rest] = process.argv.slice(2)
// The sandbox's shell passes its whole argument list; the container's argv follows `--`.
const end = rest.indexOf('--')
const specs = end < 0 ? rest : rest.slice(0, end)

function pipe(from: Socket, to: Socket): void {
  from.pipe(to)
  to.pipe(from)
  from.on('error', () => to.destroy())
  to.on('error', () => from.destroy())
}

async function listen(spec: string): Promise<void> {
  const [kind, rest = ''] = spec.split(':', 2) as [string, string | undefined]
  const [left = '', right = ''] = rest.split('=')
  const server = createServer((socket) => {
    pipe(socket, kind === 'tcp' ? connect(right) : connect(Number(right), '127.0.0.1'))
  })
  await new Promise<void>((resolve) => {
    if (kind === 'tcp') server.listen(Number(left), '127.0.0.1', resolve)
    else server.listen(left, resolve)
  })
}

await Promise.all(specs.map(listen))
writeFileSync(readyFile ?? 'ready', '')
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.exit(0)
}, 200)
