import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'

import type { ClusterConfig, ExecConfig } from './cluster-config.js'
import { ExecCredentialError, ExecCredentials, execClusterInfo } from './exec-credentials.js'

const V1 = 'client.authentication.k8s.io/v1'
const T0 = Date.parse('2030-01-01T00:00:00Z')

const dir = mkdtempSync(join(tmpdir(), 'exec-credentials-'))
after(() => {
  rmSync(dir, { recursive: true, force: true })
})

// A tiny plugin steered by its environment: it counts its runs in COUNTER_FILE, records
// KUBERNETES_EXEC_INFO in INFO_FILE and prints token `tok-<run>` unless MODE asks for a failure.
const plugin = join(dir, 'plugin.cjs')
writeFileSync(
  plugin,
  `#!/usr/bin/env node
const fs = require('node:fs')
const env = process.env
let n = 1
if (env.COUNTER_FILE) {
  n = (fs.existsSync(env.COUNTER_FILE) ? Number(fs.readFileSync(env.COUNTER_FILE, 'utf8')) : 0) + 1
  fs.writeFileSync(env.COUNTER_FILE, String(n))
}
if (env.INFO_FILE) fs.writeFileSync(env.INFO_FILE, env.KUBERNETES_EXEC_INFO ?? '')
const status = { token: (env.TOKEN_PREFIX ?? 'tok-') + n }
if (env.EXPIRY) status.expirationTimestamp = env.EXPIRY
const out = { apiVersion: env.OUT_API_VERSION ?? '${V1}', kind: 'ExecCredential', status }
setTimeout(() => {
  switch (env.MODE) {
    case 'fail':
      process.stderr.write('line 1\\nerror: credentials expired, run login\\n')
      process.exit(3)
    case 'badjson':
      process.stdout.write('token=secret')
      return
    case 'nostatus':
      delete out.status
      break
    case 'cert':
      out.status = { clientCertificateData: 'CERT', clientKeyData: 'KEY' }
      break
    case 'hang':
      setTimeout(() => {}, 60000)
      return
  }
  process.stdout.write(JSON.stringify(out))
}, Number(env.DELAY_MS ?? 0))
`
)
chmodSync(plugin, 0o755)
let caseCount = 0

/** An exec config running the plugin through this Node binary, with `env` for the plugin. */
function execConfig(env: Record<string, string>, overrides: Partial<ExecConfig> = {}): ExecConfig {
  return {
    apiVersion: V1,
    command: process.execPath,
    args: [plugin],
    env: Object.entries(env).map(([name, value]) => ({ name, value })),
    provideClusterInfo: false,
    ...overrides,
  }
}

function counterFile(): string {
  return join(dir, `counter-${++caseCount}`)
}

function runs(counter: string): number {
  return existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0
}

async function execError(promise: Promise<unknown>): Promise<ExecCredentialError> {
  try {
    await promise
  } catch (error) {
    assert.ok(
      error instanceof ExecCredentialError,
      `expected ExecCredentialError: ${String(error)}`
    )
    return error
  }
  assert.fail('expected a rejection')
}

describe('ExecCredentials', () => {
  it('caches an exec credential until shortly before it expires', async () => {
    const counter = counterFile()
    let now = T0
    const source = new ExecCredentials(
      execConfig({ COUNTER_FILE: counter, EXPIRY: new Date(T0 + 60_000).toISOString() }),
      { now: () => now }
    )
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-1' })
    now = T0 + 49_000
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-1' })
    assert.equal(runs(counter), 1)
    // Within the 10 s margin before expiry the plugin runs again.
    now = T0 + 50_000
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-2' })
    assert.equal(runs(counter), 2)
  })

  it('keeps a credential without expirationTimestamp until invalidated', async () => {
    const counter = counterFile()
    let now = T0
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter }), { now: () => now })
    await source.current()
    now = T0 + 365 * 24 * 3600_000
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-1' })
    assert.equal(runs(counter), 1)
  })

  it('runs the exec plugin once for concurrent callers', async () => {
    const counter = counterFile()
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter, DELAY_MS: '200' }))
    const results = await Promise.all(Array.from({ length: 8 }, () => source.current()))
    assert.equal(runs(counter), 1)
    for (const result of results) assert.deepEqual(result, { authorization: 'Bearer tok-1' })
  })

  it('runs the exec plugin again after invalidate', async () => {
    const counter = counterFile()
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter }))
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-1' })
    source.invalidate()
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-2' })
    assert.equal(runs(counter), 2)
  })

  it('passes KUBERNETES_EXEC_INFO with cluster info when provideClusterInfo', async () => {
    const info = join(dir, `info-${++caseCount}.json`)
    const cluster: ClusterConfig = {
      server: 'https://api.example:6443',
      caPem: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n',
      tlsServerName: 'api.internal',
      auth: { type: 'none' },
      namespace: 'default',
      source: 'test',
    }
    const withInfo = new ExecCredentials(
      execConfig({ INFO_FILE: info }, { provideClusterInfo: true }),
      { cluster: execClusterInfo(cluster) }
    )
    await withInfo.current()
    assert.deepEqual(JSON.parse(readFileSync(info, 'utf8')), {
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: 'https://api.example:6443',
          'tls-server-name': 'api.internal',
          'certificate-authority-data': Buffer.from(cluster.caPem ?? '').toString('base64'),
        },
      },
    })

    const withoutInfo = new ExecCredentials(execConfig({ INFO_FILE: info }), {
      cluster: execClusterInfo(cluster),
    })
    await withoutInfo.current()
    assert.deepEqual(JSON.parse(readFileSync(info, 'utf8')), {
      apiVersion: V1,
      kind: 'ExecCredential',
      spec: { interactive: false },
    })
  })

  it('merges the kubeconfig env over the inherited environment', async () => {
    const info = join(dir, `info-${++caseCount}.json`)
    const counter = counterFile()
    // INFO_FILE comes from the base environment, COUNTER_FILE from the kubeconfig env.
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter }), {
      env: { ...process.env, INFO_FILE: info, COUNTER_FILE: join(dir, 'overridden') },
    })
    await source.current()
    assert.equal(runs(counter), 1)
    assert.ok(existsSync(info))
  })

  it('runs a #!/usr/bin/env node plugin by its path', async () => {
    const source = new ExecCredentials(execConfig({}, { command: plugin, args: [] }))
    assert.deepEqual(await source.current(), { authorization: 'Bearer tok-1' })
  })

  it('returns a client certificate from the plugin', async () => {
    const source = new ExecCredentials(execConfig({ MODE: 'cert' }))
    assert.deepEqual(await source.current(), { clientCertPem: 'CERT', clientKeyPem: 'KEY' })
  })

  it('names a missing command and quotes the install hint', async () => {
    const source = new ExecCredentials(
      execConfig(
        {},
        { command: 'metactl-no-such-plugin', installHint: 'Install it: brew install x' }
      )
    )
    const error = await execError(source.current())
    assert.equal(error.command, 'metactl-no-such-plugin')
    assert.match(error.message, /^exec credential plugin "metactl-no-such-plugin" was not found/)
    assert.match(error.message, /Install it: brew install x$/)
  })

  it('reports a non-zero exit with the tail of stderr', async () => {
    const error = await execError(new ExecCredentials(execConfig({ MODE: 'fail' })).current())
    assert.match(
      error.message,
      /exited with code 3: line 1\nerror: credentials expired, run login$/
    )
  })

  it('reports invalid JSON without echoing stdout', async () => {
    const error = await execError(new ExecCredentials(execConfig({ MODE: 'badjson' })).current())
    assert.match(error.message, /printed invalid JSON on stdout/)
    assert.doesNotMatch(error.message, /secret/)
  })

  it('reports a wrong apiVersion and a missing status', async () => {
    const wrong = await execError(
      new ExecCredentials(
        execConfig({ OUT_API_VERSION: 'client.authentication.k8s.io/v1beta1' })
      ).current()
    )
    assert.match(
      wrong.message,
      /returned apiVersion "client.authentication.k8s.io\/v1beta1", but the kubeconfig asks for "client.authentication.k8s.io\/v1"/
    )
    const missing = await execError(new ExecCredentials(execConfig({ MODE: 'nostatus' })).current())
    assert.match(missing.message, /returned an ExecCredential without a status/)
  })

  it('refuses a token an HTTP header cannot carry, naming the plugin', async () => {
    // undici refused it on every request with only "invalid authorization header".
    const error = await execError(
      new ExecCredentials(execConfig({ TOKEN_PREFIX: 'tok\n' })).current()
    )
    assert.match(error.message, /returned a status.token with a line break/)
  })

  it('kills a plugin that runs past the timeout', async () => {
    const started = Date.now()
    const error = await execError(
      new ExecCredentials(execConfig({ MODE: 'hang' }), { timeoutMs: 300 }).current()
    )
    assert.match(error.message, /did not finish within 0.3 s and was killed/)
    assert.ok(Date.now() - started < 5000)
  })

  it('refuses interactiveMode Always without spawning', async () => {
    const counter = counterFile()
    const error = await execError(
      new ExecCredentials(
        execConfig({ COUNTER_FILE: counter }, { interactiveMode: 'Always' })
      ).current()
    )
    assert.match(error.message, /requires an interactive terminal/)
    assert.equal(runs(counter), 0)
  })

  it('runs again after a failed run instead of caching the failure', async () => {
    const counter = counterFile()
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter, MODE: 'badjson' }))
    await execError(source.current())
    await execError(source.current())
    assert.equal(runs(counter), 2)
  })

  it('lets an aborted caller stop waiting while the shared run continues', async () => {
    const counter = counterFile()
    const source = new ExecCredentials(execConfig({ COUNTER_FILE: counter, DELAY_MS: '200' }))
    const controller = new AbortController()
    const aborted = source.current(controller.signal)
    const waiting = source.current()
    controller.abort()
    await assert.rejects(aborted, { name: 'AbortError' })
    assert.deepEqual(await waiting, { authorization: 'Bearer tok-1' })
    assert.equal(runs(counter), 1)
  })
})
