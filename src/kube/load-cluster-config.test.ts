import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { after, describe, it } from 'node:test'

import { KubeconfigError } from './kubeconfig-error.js'
import { loadClusterConfig } from './load-cluster-config.js'
import { mergeKubeconfigs, parseKubeconfig } from './parse-kubeconfig.js'
import { resolveKubeconfig } from './resolve-kubeconfig.js'

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBcafake\n-----END CERTIFICATE-----\n'
const CERT_PEM = '-----BEGIN CERTIFICATE-----\nMIIBcertfake\n-----END CERTIFICATE-----\n'
const KEY_PEM = '-----BEGIN PRIVATE KEY-----\nMIIBkeyfake\n-----END PRIVATE KEY-----\n'
const b64 = (text: string): string => Buffer.from(text).toString('base64')

const root = mkdtempSync(join(tmpdir(), 'load-cluster-config-'))
after(() => {
  rmSync(root, { recursive: true, force: true })
})
let dirCount = 0

/** Creates a fresh directory with the given files (relative path to content). */
function fixture(files: Record<string, string> = {}): string {
  const dir = join(root, `case-${++dirCount}`)
  mkdirSync(dir, { recursive: true })
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), content)
  }
  return dir
}

/** A kubeconfig with cluster "c", user "u" and one context; the `*Lines` are extra YAML lines. */
function kubeconfig(options: {
  server?: string
  clusterLines?: string[]
  userLines?: string[]
  context?: string
  namespace?: string
}): string {
  const indent = (lines: string[] | undefined): string =>
    (lines ?? []).map((line) => `    ${line}\n`).join('')
  return (
    'apiVersion: v1\nkind: Config\n' +
    `clusters:\n- name: c\n  cluster:\n    server: ${options.server ?? 'https://c.example:6443'}\n` +
    indent(options.clusterLines) +
    `users:\n- name: u\n  user:\n${indent(options.userLines) || '    {}\n'}` +
    `contexts:\n- name: ${options.context ?? 'ctx'}\n  context:\n    cluster: c\n    user: u\n` +
    (options.namespace === undefined ? '' : `    namespace: ${options.namespace}\n`) +
    `current-context: ${options.context ?? 'ctx'}\n`
  )
}

/** Environment with none of the variables the loader looks at. */
const emptyEnv = {}

async function rejection(promise: Promise<unknown>): Promise<KubeconfigError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof KubeconfigError, `expected a KubeconfigError, got ${String(error)}`)
    return error
  }
  assert.fail('expected a rejection')
}

describe('loadClusterConfig', () => {
  it('reads the explicit kubeconfig with its current context and a default namespace', async () => {
    const dir = fixture({ config: kubeconfig({ userLines: ['token: abc'] }) })
    const config = await loadClusterConfig({ kubeconfig: join(dir, 'config'), env: emptyEnv })
    assert.deepEqual(config, {
      server: 'https://c.example:6443',
      auth: { type: 'token', token: 'abc' },
      namespace: 'default',
      source: `${join(dir, 'config')} (context "ctx")`,
    })
  })

  it('prefers the explicit kubeconfig over KUBECONFIG', async () => {
    const a = fixture({ config: kubeconfig({ server: 'https://explicit' }) })
    const b = fixture({ config: kubeconfig({ server: 'https://from-env' }) })
    const config = await loadClusterConfig({
      kubeconfig: join(a, 'config'),
      env: { KUBECONFIG: join(b, 'config') },
    })
    assert.equal(config.server, 'https://explicit')
  })

  it('fails when the explicit kubeconfig does not exist', async () => {
    const dir = fixture()
    const error = await rejection(
      loadClusterConfig({ kubeconfig: join(dir, 'nope'), env: emptyEnv })
    )
    assert.equal(error.file, join(dir, 'nope'))
    assert.equal(
      error.message,
      `kubeconfig ${join(dir, 'nope')}: file not found; check the --kubeconfig path`
    )
  })

  it('merges KUBECONFIG files with the first definition winning', async () => {
    const first = fixture({
      config:
        'clusters:\n- name: shared\n  cluster: {server: "https://first"}\n' +
        'contexts:\n- name: dev\n  context: {cluster: shared, user: only-second}\n' +
        'current-context: dev\n',
    })
    const second = fixture({
      config:
        'clusters:\n- name: shared\n  cluster: {server: "https://second"}\n' +
        'users:\n- name: only-second\n  user: {token: t2}\n' +
        'contexts:\n- name: dev\n  context: {cluster: shared, namespace: from-second}\n' +
        '- name: prod\n  context: {cluster: shared}\n' +
        'current-context: prod\n',
    })
    const missing = join(fixture(), 'missing')
    const config = await loadClusterConfig({
      env: {
        KUBECONFIG: [missing, join(first, 'config'), join(second, 'config')].join(delimiter),
      },
    })
    // current-context and context "dev" come from the first file, the user only from the second.
    assert.equal(config.server, 'https://first')
    assert.equal(config.namespace, 'default')
    assert.deepEqual(config.auth, { type: 'token', token: 't2' })
    assert.equal(config.source, `${join(first, 'config')} (context "dev")`)
  })

  it('fails when no file listed in KUBECONFIG exists', async () => {
    const dir = fixture()
    const list = [join(dir, 'a'), join(dir, 'b')].join(delimiter)
    const error = await rejection(loadClusterConfig({ env: { KUBECONFIG: list } }))
    assert.equal(error.file, list)
    assert.match(
      error.message,
      /none of the files in KUBECONFIG exist; fix KUBECONFIG or pass --kubeconfig/
    )
  })

  it('reads in-cluster config when KUBERNETES_SERVICE_HOST is set', async () => {
    const sa = fixture({ token: 'sa-token\n', 'ca.crt': CA_PEM, namespace: 'team-a\n' })
    const home = fixture({ '.kube/config': kubeconfig({}) })
    const config = await loadClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
      homeDir: home,
    })
    assert.deepEqual(config, {
      server: 'https://10.0.0.1:443',
      caPem: CA_PEM,
      auth: { type: 'tokenFile', path: join(sa, 'token') },
      namespace: 'team-a',
      source: 'in-cluster',
    })
  })

  it('brackets an IPv6 service host and defaults the namespace', async () => {
    const sa = fixture({ token: 't' })
    const config = await loadClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      serviceAccountDir: sa,
    })
    assert.equal(config.server, 'https://[fd00::1]:6443')
    assert.equal(config.namespace, 'default')
    assert.equal(config.caPem, undefined)
  })

  it('prefers KUBECONFIG over in-cluster', async () => {
    const sa = fixture({ token: 't' })
    const dir = fixture({ config: kubeconfig({ server: 'https://from-env' }) })
    const config = await loadClusterConfig({
      env: {
        KUBECONFIG: join(dir, 'config'),
        KUBERNETES_SERVICE_HOST: '10.0.0.1',
        KUBERNETES_SERVICE_PORT: '443',
      },
      serviceAccountDir: sa,
    })
    assert.equal(config.server, 'https://from-env')
  })

  it('falls back to ~/.kube/config when not in a cluster', async () => {
    const home = fixture({
      '.kube/config': kubeconfig({ server: 'https://home', namespace: 'ns' }),
    })
    const config = await loadClusterConfig({ env: emptyEnv, homeDir: home })
    assert.equal(config.server, 'https://home')
    assert.equal(config.namespace, 'ns')
  })

  it('falls through to ~/.kube/config when the service-account token is not mounted', async () => {
    const sa = fixture()
    const home = fixture({ '.kube/config': kubeconfig({ server: 'https://home' }) })
    const config = await loadClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
      homeDir: home,
    })
    assert.equal(config.server, 'https://home')
  })

  it('lists the places tried when no kubeconfig is found', async () => {
    const home = fixture()
    const error = await rejection(
      loadClusterConfig({ env: emptyEnv, homeDir: home, serviceAccountDir: home })
    )
    assert.equal(error.file, undefined)
    assert.equal(
      error.message,
      'no kubeconfig found: tried --kubeconfig (not given), KUBECONFIG (not set), in-cluster ' +
        '(KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT not set), ' +
        `${join(home, '.kube', 'config')} (not found); pass --kubeconfig or set KUBECONFIG`
    )
  })

  it('uses an explicit context over current-context and skips in-cluster for it', async () => {
    const sa = fixture({ token: 't' })
    const home = fixture({
      '.kube/config':
        'clusters:\n- name: c\n  cluster: {server: "https://c"}\n' +
        'contexts:\n- name: a\n  context: {cluster: c, namespace: na}\n' +
        '- name: b\n  context: {cluster: c, namespace: nb}\n' +
        'current-context: a\n',
    })
    const config = await loadClusterConfig({
      context: 'b',
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
      homeDir: home,
    })
    assert.equal(config.namespace, 'nb')
    assert.deepEqual(config.auth, { type: 'none' })
  })
})

describe('resolveKubeconfig', () => {
  const resolveText = (text: string, file = '/k/config', context?: string) =>
    resolveKubeconfig(parseKubeconfig(text, file), context === undefined ? {} : { context })

  it('names the file and context when the context is missing', async () => {
    const error = await rejection(resolveText(kubeconfig({ context: 'a' }), '/x/config', 'dev'))
    assert.equal(error.file, '/x/config')
    assert.equal(error.context, 'dev')
    assert.equal(
      error.message,
      'kubeconfig /x/config: context "dev" not found (available: a); pass an existing --context'
    )
  })

  it('says when no context is selected at all', async () => {
    const error = await rejection(resolveText('clusters: []\n', '/x/config'))
    assert.match(
      error.message,
      /^kubeconfig \/x\/config: no context selected: current-context is not set \(available: none\); pass --context/
    )
  })

  it('names the undefined user a context refers to', async () => {
    const error = await rejection(
      resolveText(
        'clusters:\n- name: c\n  cluster: {server: "https://c"}\n' +
          'contexts:\n- name: dev\n  context: {cluster: c, user: bob}\ncurrent-context: dev\n',
        '/x/config'
      )
    )
    assert.equal(error.context, 'dev')
    assert.equal(
      error.message,
      'kubeconfig /x/config: context "dev" refers to user "bob", which is not defined; add it under users or fix the context'
    )
  })

  it('names the undefined cluster a context refers to', async () => {
    const error = await rejection(
      resolveText(
        'contexts:\n- name: dev\n  context: {cluster: gone}\ncurrent-context: dev\n',
        '/x/config'
      )
    )
    assert.match(error.message, /context "dev" refers to cluster "gone", which is not defined/)
  })

  it('reports a cluster without a server', async () => {
    const error = await rejection(
      resolveText(
        'clusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: dev\n  context: {cluster: c}\ncurrent-context: dev\n',
        '/x/config'
      )
    )
    assert.equal(
      error.message,
      'kubeconfig /x/config: context "dev": cluster "c" has no server; set clusters[].cluster.server'
    )
  })

  it('resolves a relative certificate-authority against the kubeconfig directory', async () => {
    const dir = fixture({
      'nested/config': kubeconfig({ clusterLines: ['certificate-authority: pki/ca.crt'] }),
      'nested/pki/ca.crt': CA_PEM,
    })
    const config = await loadClusterConfig({ kubeconfig: join(dir, 'nested', 'config'), env: {} })
    assert.equal(config.caPem, CA_PEM)
  })

  it('reports an unreadable certificate-authority with its path', async () => {
    const dir = fixture({ config: kubeconfig({ clusterLines: ['certificate-authority: ca.crt'] }) })
    const error = await rejection(loadClusterConfig({ kubeconfig: join(dir, 'config'), env: {} }))
    assert.equal(error.file, join(dir, 'config'))
    assert.equal(error.context, 'ctx')
    assert.match(
      error.message,
      new RegExp(
        `^kubeconfig ${join(dir, 'config')}: context "ctx": cluster "c" cannot read certificate-authority ${join(dir, 'ca.crt')}: ENOENT`
      )
    )
    assert.equal((error.cause as NodeJS.ErrnoException).code, 'ENOENT')
  })

  it('decodes inline certificate data and reads client certificate files', async () => {
    const dir = fixture({ 'client.crt': CERT_PEM, 'client.key': KEY_PEM })
    const text = kubeconfig({
      clusterLines: [`certificate-authority-data: ${b64(CA_PEM)}`, 'tls-server-name: api.internal'],
      userLines: ['client-certificate: client.crt', `client-key-data: ${b64(KEY_PEM)}`],
    })
    const config = await resolveText(text, join(dir, 'config'))
    assert.equal(config.caPem, CA_PEM)
    assert.equal(config.tlsServerName, 'api.internal')
    assert.equal(config.clientCertPem, CERT_PEM)
    assert.equal(config.clientKeyPem, KEY_PEM)
    assert.deepEqual(config.auth, { type: 'none' })
  })

  it('reads a cluster proxy-url, a bare host:port meaning http://', async () => {
    const withScheme = await resolveText(
      kubeconfig({ clusterLines: ['proxy-url: https://ops:pw@proxy.corp:3129'] })
    )
    assert.equal(withScheme.proxyUrl, 'https://ops:pw@proxy.corp:3129/')
    const bare = await resolveText(kubeconfig({ clusterLines: ['proxy-url: proxy.corp:3128'] }))
    assert.equal(bare.proxyUrl, 'http://proxy.corp:3128/')
    const none = await resolveText(kubeconfig({ clusterLines: [] }))
    assert.equal(none.proxyUrl, undefined)
  })

  it('refuses a socks5 proxy-url with the cluster named', async () => {
    const error = await rejection(
      resolveText(kubeconfig({ clusterLines: ['proxy-url: socks5://proxy:1080'] }))
    )
    assert.match(
      error.message,
      /cluster "[^"]+" has an unusable proxy-url "socks5:\/\/proxy:1080": SOCKS5 proxies are not supported/
    )
  })

  it('rejects certificate-authority-data that is not base64 PEM', async () => {
    const text = kubeconfig({ clusterLines: ['certificate-authority-data: "-----BEGIN CERT"'] })
    const error = await rejection(resolveText(text))
    assert.match(error.message, /certificate-authority-data that is not base64-encoded PEM/)
  })

  it('rejects a client certificate without a key', async () => {
    const error = await rejection(
      resolveText(kubeconfig({ userLines: [`client-certificate-data: ${b64(CERT_PEM)}`] }))
    )
    assert.match(error.message, /user "u" has a client certificate but no client key/)
  })

  it('keeps insecure-skip-tls-verify and rejects it together with a CA', async () => {
    const config = await resolveText(
      kubeconfig({ clusterLines: ['insecure-skip-tls-verify: true'] })
    )
    assert.equal(config.insecureSkipTlsVerify, true)
    const error = await rejection(
      resolveText(
        kubeconfig({
          clusterLines: [
            'insecure-skip-tls-verify: true',
            `certificate-authority-data: ${b64(CA_PEM)}`,
          ],
        })
      )
    )
    assert.match(error.message, /insecure-skip-tls-verify together with a certificate authority/)
  })

  it('adds https to a server without a scheme and drops a trailing slash', async () => {
    assert.equal(
      (await resolveText(kubeconfig({ server: 'host:6443' }))).server,
      'https://host:6443'
    )
    assert.equal(
      (await resolveText(kubeconfig({ server: 'https://h/k8s/clusters/x/' }))).server,
      'https://h/k8s/clusters/x'
    )
  })

  it('reads basic auth and checks that a token file is readable', async () => {
    const basic = await resolveText(
      kubeconfig({ userLines: ['username: admin', 'password: s3cret'] })
    )
    assert.deepEqual(basic.auth, { type: 'basic', username: 'admin', password: 's3cret' })

    const dir = fixture({ 'tok/token': 'abc\n' })
    const file = await resolveText(
      kubeconfig({ userLines: ['tokenFile: tok/token'] }),
      join(dir, 'config')
    )
    assert.deepEqual(file.auth, { type: 'tokenFile', path: join(dir, 'tok', 'token') })

    const error = await rejection(
      resolveText(kubeconfig({ userLines: ['tokenFile: nope'] }), join(dir, 'config'))
    )
    assert.match(error.message, /user "u" cannot read tokenFile .*nope: ENOENT/)
  })

  it('a kubeconfig that loads gives a token an HTTP header can carry, inline or from a file', async () => {
    // undici refused such a token on every request with only "invalid authorization header".
    const inline = await rejection(resolveText(kubeconfig({ userLines: ['token: "a\\nb"'] })))
    assert.match(
      inline.message,
      /user "u" has a token with a character which an HTTP header cannot carry/
    )
    const dir = fixture({ 'tok/token': 'ab\u0000c\n' })
    const file = await rejection(
      resolveText(kubeconfig({ userLines: ['tokenFile: tok/token'] }), join(dir, 'config'))
    )
    assert.match(file.message, /has a tokenFile .*token with a character which an HTTP header/)
  })

  it('rejects a token together with basic auth, and auth-provider users', async () => {
    const both = await rejection(
      resolveText(kubeconfig({ userLines: ['token: t', 'username: a'] }))
    )
    assert.match(both.message, /sets both a token and username\/password/)
    const provider = await rejection(
      resolveText(kubeconfig({ userLines: ['auth-provider: {name: oidc, config: {}}'] }))
    )
    assert.match(
      provider.message,
      /auth-provider "oidc", which is not supported; switch to an exec/
    )
  })

  it('reads an exec user and resolves a relative command against the kubeconfig directory', async () => {
    const text = kubeconfig({
      userLines: [
        'exec:',
        '  apiVersion: client.authentication.k8s.io/v1beta1',
        '  command: ./bin/get-token',
        '  args: [--cluster, c]',
        '  env: [{name: REGION, value: eu}]',
        '  provideClusterInfo: true',
        '  installHint: run make tools',
      ],
    })
    const config = await resolveText(text, '/k/config')
    assert.deepEqual(config.auth, {
      type: 'exec',
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        command: '/k/bin/get-token',
        args: ['--cluster', 'c'],
        env: [{ name: 'REGION', value: 'eu' }],
        provideClusterInfo: true,
        installHint: 'run make tools',
      },
    })
    const onPath = await resolveText(
      kubeconfig({
        userLines: [
          'exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}',
        ],
      })
    )
    assert.deepEqual(onPath.auth, {
      type: 'exec',
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'aws',
        args: [],
        env: [],
        provideClusterInfo: false,
        interactiveMode: 'Never',
      },
    })
  })

  it('rejects an exec plugin API version we do not speak', async () => {
    const error = await rejection(
      resolveText(
        kubeconfig({
          userLines: ['exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}'],
        })
      )
    )
    assert.match(
      error.message,
      /exec apiVersion "client.authentication.k8s.io\/v1alpha1", which is not supported/
    )
  })
})

describe('parseKubeconfig', () => {
  it('reports invalid YAML with the line', () => {
    assert.throws(
      () => parseKubeconfig('clusters:\n- name: c\n  cluster: server: x\n', '/x/config'),
      (error: unknown) => {
        assert.ok(error instanceof KubeconfigError)
        assert.equal(error.file, '/x/config')
        assert.match(
          error.message,
          /^kubeconfig \/x\/config: invalid YAML: .* at line 3, column \d+; fix the file/
        )
        return true
      }
    )
  })

  it('reports a field of the wrong type with its entry', () => {
    assert.throws(
      () =>
        parseKubeconfig(
          'clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: "yes"}\n',
          '/x/config'
        ),
      /^KubeconfigError: kubeconfig \/x\/config: cluster "c": insecure-skip-tls-verify must be true or false$/
    )
  })

  it('rejects a name defined twice in one file', () => {
    assert.throws(
      () => parseKubeconfig('users:\n- name: u\n- name: u\n', '/x/config'),
      /users defines "u" twice/
    )
  })

  it('prints no YAML warning: refuses an unknown directive and a collection key, keeps a tag', () => {
    // The yaml package printed `(node:…) YAMLWarning` lines through process.emitWarning.
    const printed: unknown[] = []
    const emitWarning = process.emitWarning.bind(process)
    process.emitWarning = (warning: string | Error) => {
      printed.push(warning)
    }
    try {
      assert.throws(
        () => parseKubeconfig('%FOO bar\n---\ncurrent-context: x\n', '/x/config'),
        /^KubeconfigError: kubeconfig \/x\/config: invalid YAML: Unknown directive %FOO at line 1/
      )
      assert.throws(
        () => parseKubeconfig('current-context: x\n? {a: 1}\n: y\n', '/x/config'),
        /invalid YAML: a mapping or list used as a key at line 2; fix the file/
      )
      assert.equal(parseKubeconfig('current-context: !name x\n', '/x/config').currentContext, 'x')
    } finally {
      process.emitWarning = emitWarning
    }
    assert.deepEqual(printed, [])
  })

  it('treats an empty file as an empty configuration', () => {
    const config = parseKubeconfig('', '/x/config')
    assert.equal(config.contexts.size, 0)
    assert.equal(config.currentContext, undefined)
  })
})

describe('mergeKubeconfigs', () => {
  it('keeps the first entry for each name and the first current-context', () => {
    const a = parseKubeconfig('clusters:\n- name: c\n  cluster: {server: "https://a"}\n', '/a')
    const b = parseKubeconfig(
      'clusters:\n- name: c\n  cluster: {server: "https://b"}\n- name: d\n  cluster: {server: "https://d"}\ncurrent-context: x\n',
      '/b'
    )
    const c = parseKubeconfig('current-context: y\n', '/c')
    const merged = mergeKubeconfigs([a, b, c])
    assert.deepEqual(merged.files, ['/a', '/b', '/c'])
    assert.equal(merged.clusters.get('c')?.server, 'https://a')
    assert.equal(merged.clusters.get('c')?.file, '/a')
    assert.equal(merged.clusters.get('d')?.server, 'https://d')
    assert.equal(merged.currentContext, 'x')
  })
})
