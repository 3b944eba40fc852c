import { readFile as readFileFromDisk } from 'node:fs/promises'
import { homedir } from 'node:os'
import path from 'node:path'

import { createRequire } from 'node:module'
import type * as Yaml from 'yaml'

import { isJsonObject } from '../core/kube-object.js'
import type { AuthConfig, ClusterConfig, ExecConfig } from './cluster-config.js'
import { isValidHeaderValue } from './header-value.js'
import { parseProxyUrl } from './proxy/proxy-resolver.js'
import { KubeconfigError } from './kubeconfig-error.js'

/** Reads a UTF-8 text file; injectable so tests need not touch the real file system. */
export type ReadTextFile = (filePath: string) => Promise<string>

/** Where the kubelet mounts a pod's service-account token, CA bundle and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

/** The exec plugin API versions we speak; v1alpha1 was removed from client-go in 1.24. */
const EXEC_API_VERSIONS = new Set([
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
])

const INTERACTIVE_MODES = new Set(['Never', 'IfAvailable', 'Always'])

/** A kubeconfig `clusters[].cluster` entry, with file references already made absolute. */
export interface KubeconfigCluster {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly server?: string | undefined
  readonly certificateAuthority?: string | undefined
  /** Base64 of a PEM bundle, as written in the file. */
  readonly certificateAuthorityData?: string | undefined
  readonly insecureSkipTlsVerify?: boolean | undefined
  readonly tlsServerName?: string | undefined
  /** `proxy-url`: the proxy every request to this cluster goes through. */
  readonly proxyUrl?: string | undefined
}

/** A kubeconfig `users[].user.exec` block, not yet validated (only the selected user is). */
export interface KubeconfigExec {
  readonly apiVersion?: string | undefined
  readonly command?: string | undefined
  readonly args: readonly string[]
  readonly env: readonly { readonly name: string; readonly value: string }[]
  readonly provideClusterInfo: boolean
  readonly interactiveMode?: string | undefined
  readonly installHint?: string | undefined
}

/** A kubeconfig `users[].user` entry, with file references already made absolute. */
export interface KubeconfigUser {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly clientCertificate?: string | undefined
  /** Base64 of a PEM certificate, as written in the file. */
  readonly clientCertificateData?: string | undefined
  readonly clientKey?: string | undefined
  /** Base64 of a PEM private key, as written in the file. */
  readonly clientKeyData?: string | undefined
  readonly token?: string | undefined
  readonly tokenFile?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | undefined
  readonly exec?: KubeconfigExec | undefined
  /** Name of a legacy `auth-provider`, kept only to reject it with a clear message. */
  readonly authProvider?: string | undefined
}

/** A kubeconfig `contexts[].context` entry. */
export interface KubeconfigContext {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly cluster?: string | undefined
  readonly user?: string | undefined
  readonly namespace?: string | undefined
}

/** One kubeconfig file, or several merged, as named maps of clusters, users and contexts. */
export interface Kubeconfig {
  /** The files this configuration was read from, in precedence order. */
  readonly files: readonly string[]
  readonly currentContext?: string | undefined
  readonly clusters: ReadonlyMap<string, KubeconfigCluster>
  readonly users: ReadonlyMap<string, KubeconfigUser>
  readonly contexts: ReadonlyMap<string, KubeconfigContext>
}

/** Options of {@link loadClusterConfig}; all of them exist for the CLI flags or for tests. */
export interface LoadClusterConfigOptions {
  /** Explicit kubeconfig path (`--kubeconfig`); it must exist and wins over everything else. */
  readonly kubeconfig?: string | undefined
  /** Context to use instead of the kubeconfig's `current-context` (`--context`). */
  readonly context?: string | undefined
  /** Environment to read `KUBECONFIG` and the in-cluster variables from; `process.env` by default. */
  readonly env?: NodeJS.ProcessEnv
  /** Home directory holding `.kube/config`; `os.homedir()` by default. */
  readonly homeDir?: string
  /** Reads files; `fs.readFile` as UTF-8 by default. */
  readonly readFile?: ReadTextFile
  /** Directory of the mounted service-account files; {@link SERVICE_ACCOUNT_DIR} by default. */
  readonly serviceAccountDir?: string
}

/** Options of {@link resolveKubeconfig}. */
export interface ResolveKubeconfigOptions {
  /** Context to use instead of `current-context`. */
  readonly context?: string | undefined
  /** Reads certificate and token files; `fs.readFile` as UTF-8 by default. */
  readonly readFile?: ReadTextFile
}

/**
 * Loads the cluster configuration the way controller-runtime does.
 *
 * @remarks
 * Precedence: the explicit `kubeconfig` path, then `$KUBECONFIG` (a path list merged with client-go
 * rules), then the in-cluster service account, then `~/.kube/config`. In-cluster is skipped when a
 * `context` is given, since only a kubeconfig has contexts. Every failure is a
 * {@link KubeconfigError} naming the file and context.
 */
export async function loadClusterConfig(
  options: LoadClusterConfigOptions = {}
): Promise<ClusterConfig> {
  const env = options.env ?? process.env
  const readFile = options.readFile ?? readUtf8
  const context = options.context === '' ? undefined : options.context
  const resolveOptions: ResolveKubeconfigOptions = { context, readFile }

  if (options.kubeconfig !== undefined && options.kubeconfig !== '') {
    const file = path.resolve(options.kubeconfig)
    const text = await readKubeconfigFile(file, readFile)
    if (text === undefined) {
      throw new KubeconfigError(`kubeconfig ${file}: file not found; check the --kubeconfig path`, {
        file,
      })
    }
    return resolveKubeconfig(parseKubeconfig(text, file), resolveOptions)
  }

  const list = env['KUBECONFIG']
  if (list !== undefined && list !== '') {
    const files = [
      ...new Set(
        list
          .split(path.delimiter)
          .filter((p) => p !== '')
          .map((p) => path.resolve(p))
      ),
    ]
    const configs: Kubeconfig[] = []
    for (const file of files) {
      // client-go skips missing entries so one KUBECONFIG can serve several machines.
      const text = await readKubeconfigFile(file, readFile)
      if (text !== undefined) configs.push(parseKubeconfig(text, file))
    }
    if (configs.length === 0) {
      throw new KubeconfigError(
        `kubeconfig ${list}: none of the files in KUBECONFIG exist; fix KUBECONFIG or pass --kubeconfig`,
        { file: list }
      )
    }
    return resolveKubeconfig(mergeKubeconfigs(configs), resolveOptions)
  }

  const tried = ['--kubeconfig (not given)', 'KUBECONFIG (not set)']
  if (context === undefined) {
    const inCluster = await loadInClusterConfig(
      env,
      options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR,
      readFile
    )
    if (typeof inCluster !== 'string') return inCluster
    tried.push(`in-cluster (${inCluster})`)
  } else {
    tried.push(`in-cluster (skipped: context "${context}" was given)`)
  }

  const homeFile = path.join(options.homeDir ?? homedir(), '.kube', 'config')
  const text = await readKubeconfigFile(homeFile, readFile)
  if (text !== undefined) return resolveKubeconfig(parseKubeconfig(text, homeFile), resolveOptions)
  tried.push(`${homeFile} (not found)`)

  throw new KubeconfigError(
    `no kubeconfig found: tried ${tried.join(', ')}; pass --kubeconfig or set KUBECONFIG`,
    context === undefined ? {} : { context }
  )
}

/**
 * Parses the text of one kubeconfig file into named clusters, users and contexts.
 *
 * @remarks
 * Relative file references (certificate, key, token file, and an exec command containing a path
 * separator) are resolved against the file's directory, as client-go does before merging, so a
 * merged configuration never loses track of where a path was relative to. Type errors anywhere
 * are rejected, as client-go's strict decoding does; missing values are only checked later, for
 * the context actually selected.
 */
export function parseKubeconfig(text: string, filePath: string): Kubeconfig {
  let doc: unknown
  try {
    doc = parse(text)
  } catch (error) {
    // The yaml message's first line already says "at line N, column M"; the rest is a snippet.
    const reason = error instanceof Error ? firstLine(error.message) : 'unreadable YAML'
    throw new KubeconfigError(
      `kubeconfig ${filePath}: invalid YAML: ${reason}; fix the file or point --kubeconfig elsewhere`,
      { file: filePath, cause: error }
    )
  }
  const fail = (detail: string): KubeconfigError =>
    new KubeconfigError(`kubeconfig ${filePath}: ${detail}`, { file: filePath })

  // An empty file is an empty configuration to client-go, not an error.
  doc ??= {}
  if (!isJsonObject(doc)) {
    throw fail('the file is not a YAML mapping; a kubeconfig has clusters, users and contexts')
  }
  const kind = doc['kind']
  if (kind !== undefined && kind !== null && kind !== 'Config') {
    throw fail(`kind is ${JSON.stringify(kind)}, expected Config; is this really a kubeconfig?`)
  }

  const baseDir = path.dirname(path.resolve(filePath))
  const resolveRef = (ref: string | undefined): string | undefined =>
    ref === undefined ? undefined : path.resolve(baseDir, ref)
  const clusters = new Map<string, KubeconfigCluster>()
  for (const [name, body] of namedEntries(doc, 'clusters', 'cluster', fail)) {
    const field = new Fields(body, `cluster "${name}"`, fail)
    clusters.set(name, {
      file: filePath,
      server: field.string('server'),
      certificateAuthority: resolveRef(field.string('certificate-authority')),
      certificateAuthorityData: field.string('certificate-authority-data'),
      insecureSkipTlsVerify: field.boolean('insecure-skip-tls-verify'),
      tlsServerName: field.string('tls-server-name'),
      proxyUrl: field.string('proxy-url'),
    })
  }
  const users = parseUsers(doc, filePath, baseDir, fail)
  const contexts = new Map<string, KubeconfigContext>()
  for (const [name, body] of namedEntries(doc, 'contexts', 'context', fail)) {
    const field = new Fields(body, `context "${name}"`, fail)
    contexts.set(name, {
      file: filePath,
      cluster: field.string('cluster'),
      user: field.string('user'),
      namespace: field.string('namespace'),
    })
  }
  return {
    files: [filePath],
    currentContext: new Fields(doc, 'the file', fail).string('current-context'),
    clusters,
    users,
    contexts,
  }
}

/** The `users` of a kubeconfig file, with their file references resolved against `baseDir`. */
function parseUsers(
  doc: Record<string, unknown>,
  filePath: string,
  baseDir: string,
  fail: (detail: string) => KubeconfigError
): Map<string, KubeconfigUser> {
  const resolveRef = (ref: string | undefined): string | undefined =>
    ref === undefined ? undefined : path.resolve(baseDir, ref)
  const users = new Map<string, KubeconfigUser>()
  for (const [name, body] of namedEntries(doc, 'users', 'user', fail)) {
    const field = new Fields(body, `user "${name}"`, fail)
    const exec = field.record('exec')
    const authProvider = field.record('auth-provider')
    users.set(name, {
      file: filePath,
      clientCertificate: resolveRef(field.string('client-certificate')),
      clientCertificateData: field.string('client-certificate-data'),
      clientKey: resolveRef(field.string('client-key')),
      clientKeyData: field.string('client-key-data'),
      token: field.string('token'),
      tokenFile: resolveRef(field.string('tokenFile')),
      username: field.string('username'),
      password: field.string('password'),
      exec: exec === undefined ? undefined : parseExec(exec, name, baseDir, fail),
      authProvider:
        authProvider === undefined
          ? undefined
          : (new Fields(authProvider, `user "${name}" auth-provider`, fail).string('name') ??
            'unnamed'),
    })
  }
  return users
}

/**
 * Merges kubeconfig files listed in `KUBECONFIG`, earliest first, with client-go's rules.
 *
 * @remarks
 * The first file to define a cluster, user or context name wins it whole (entries are not merged
 * field by field), and the first non-empty `current-context` wins.
 */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const clusters = new Map<string, KubeconfigCluster>()
  const users = new Map<string, KubeconfigUser>()
  const contexts = new Map<string, KubeconfigContext>()
  let currentContext: string | undefined
  for (const config of configs) {
    addMissing(clusters, config.clusters)
    addMissing(users, config.users)
    addMissing(contexts, config.contexts)
    currentContext ??= config.currentContext
  }
  return { files: configs.flatMap((c) => c.files), currentContext, clusters, users, contexts }
}

/** The context a {@link resolveKubeconfig} call selects, with its cluster and user. */
interface SelectedContext {
  readonly contextName: string
  readonly context: KubeconfigContext
  readonly clusterName: string
  readonly cluster: KubeconfigCluster
  readonly userName: string
  readonly user: KubeconfigUser
  /** Builds the error for a problem of this context, naming the file it was found in. */
  readonly fail: (file: string, detail: string, cause?: unknown) => KubeconfigError
}

/**
 * Selects the context (`--context`, else current-context) and finds its cluster and user; every
 * missing name is an error that says what to fix.
 */
function selectContext(kubeconfig: Kubeconfig, options: ResolveKubeconfigOptions): SelectedContext {
  const files = kubeconfig.files.join(path.delimiter)
  const available = nonEmpty([...kubeconfig.contexts.keys()].join(', ')) ?? 'none'
  const explicit = options.context === '' ? undefined : options.context
  const contextName = explicit ?? kubeconfig.currentContext
  if (contextName === undefined) {
    throw new KubeconfigError(
      `kubeconfig ${files}: no context selected: current-context is not set (available: ${available}); pass --context or run kubectl config use-context`,
      { file: files }
    )
  }
  const context = kubeconfig.contexts.get(contextName)
  if (context === undefined) {
    const fix = explicit === undefined ? 'fix current-context' : 'pass an existing --context'
    throw new KubeconfigError(
      `kubeconfig ${files}: context "${contextName}" not found (available: ${available}); ${fix}`,
      { file: files, context: contextName }
    )
  }
  const fail = (file: string, detail: string, cause?: unknown): KubeconfigError =>
    new KubeconfigError(
      `kubeconfig ${file}: context "${contextName}"${detail}`,
      cause === undefined ? { file, context: contextName } : { file, context: contextName, cause }
    )

  if (context.cluster === undefined) {
    throw fail(context.file, ' names no cluster; set contexts[].context.cluster')
  }
  const clusterName = context.cluster
  const cluster = kubeconfig.clusters.get(clusterName)
  if (cluster === undefined) {
    throw fail(
      context.file,
      ` refers to cluster "${clusterName}", which is not defined; add it under clusters or fix the context`
    )
  }
  // A context without a user is anonymous access, which client-go allows.
  const userName = context.user ?? '(none)'
  let user: KubeconfigUser = { file: context.file }
  if (context.user !== undefined) {
    const found = kubeconfig.users.get(context.user)
    if (found === undefined) {
      throw fail(
        context.file,
        ` refers to user "${context.user}", which is not defined; add it under users or fix the context`
      )
    }
    user = found
  }

  return { contextName, context, clusterName, cluster, userName, user, fail }
}

/**
 * Turns the selected context of a parsed kubeconfig into a {@link ClusterConfig}.
 *
 * @remarks
 * Reads the certificate files it refers to and checks that a token file is readable, so that a
 * broken kubeconfig fails at startup with the file and context named rather than on first request.
 */
export async function resolveKubeconfig(
  kubeconfig: Kubeconfig,
  options: ResolveKubeconfigOptions = {}
): Promise<ClusterConfig> {
  const readFile = options.readFile ?? readUtf8
  const { contextName, context, clusterName, cluster, userName, user, fail } = selectContext(
    kubeconfig,
    options
  )
  const clusterFail = (detail: string, cause?: unknown): KubeconfigError =>
    fail(cluster.file, `: cluster "${clusterName}" ${detail}`, cause)
  const userFail = (detail: string, cause?: unknown): KubeconfigError =>
    fail(user.file, `: user "${userName}" ${detail}`, cause)

  if (cluster.server === undefined) {
    throw clusterFail('has no server; set clusters[].cluster.server')
  }
  const server = normalizeServer(cluster.server)
  if (server === undefined) {
    throw clusterFail(
      `has an invalid server ${JSON.stringify(cluster.server)}; use a URL such as https://host:6443`
    )
  }
  const hasCa =
    cluster.certificateAuthority !== undefined || cluster.certificateAuthorityData !== undefined
  if (cluster.insecureSkipTlsVerify === true && hasCa) {
    throw clusterFail(
      'sets insecure-skip-tls-verify together with a certificate authority; remove one of them'
    )
  }
  const proxyUrl = validProxyUrl(cluster.proxyUrl, clusterFail)
  // The inline -data form wins over the file form, as in client-go.
  const caPem = await pemFrom(
    cluster.certificateAuthorityData,
    cluster.certificateAuthority,
    'certificate-authority',
    readFile,
    clusterFail
  )
  const clientCertPem = await pemFrom(
    user.clientCertificateData,
    user.clientCertificate,
    'client-certificate',
    readFile,
    userFail
  )
  const clientKeyPem = await pemFrom(
    user.clientKeyData,
    user.clientKey,
    'client-key',
    readFile,
    userFail
  )
  if ((clientCertPem === undefined) !== (clientKeyPem === undefined)) {
    throw userFail(
      clientCertPem === undefined
        ? 'has a client key but no client certificate; set client-certificate or client-certificate-data'
        : 'has a client certificate but no client key; set client-key or client-key-data'
    )
  }

  const auth = await resolveAuth(user, readFile, userFail)
  return {
    server,
    ...(caPem === undefined ? {} : { caPem }),
    ...(cluster.insecureSkipTlsVerify === true ? { insecureSkipTlsVerify: true } : {}),
    ...(cluster.tlsServerName === undefined ? {} : { tlsServerName: cluster.tlsServerName }),
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
    ...(clientCertPem === undefined ? {} : { clientCertPem }),
    ...(clientKeyPem === undefined ? {} : { clientKeyPem }),
    auth,
    namespace: context.namespace ?? 'default',
    source: `${context.file} (context "${contextName}")`,
  }
}

/** A cluster's `proxy-url`, checked as client-go checks it (a URL with an http or https scheme). */
function validProxyUrl(
  value: string | undefined,
  fail: (detail: string, cause?: unknown) => KubeconfigError
): string | undefined {
  if (value === undefined || value === '') return undefined
  try {
    return parseProxyUrl(value, 'proxy-url').href
  } catch (error) {
    throw fail(`has an unusable ${(error as Error).message}`, error)
  }
}

/** Picks the user's bearer mechanism with client-go's precedence: token, token file, basic, exec. */
async function resolveAuth(
  user: KubeconfigUser,
  readFile: ReadTextFile,
  fail: (detail: string, cause?: unknown) => KubeconfigError
): Promise<AuthConfig> {
  if (user.authProvider !== undefined) {
    throw fail(
      `uses auth-provider "${user.authProvider}", which is not supported; switch to an exec credential plugin (such as kubelogin for OIDC)`
    )
  }
  const hasToken = user.token !== undefined || user.tokenFile !== undefined
  const hasBasic = user.username !== undefined || user.password !== undefined
  if (hasToken && hasBasic) {
    throw fail('sets both a token and username/password; keep only one authentication method')
  }
  const unsendable =
    'which an HTTP header cannot carry (a line break, a control character or a character beyond Latin-1)'
  if (user.token !== undefined) {
    if (!isValidHeaderValue(user.token)) throw fail(`has a token with a character ${unsendable}`)
    return { type: 'token', token: user.token }
  }
  if (user.tokenFile !== undefined) {
    let token: string
    try {
      token = await readFile(user.tokenFile)
    } catch (error) {
      throw fail(`cannot read tokenFile ${user.tokenFile}: ${describeFsError(error)}`, error)
    }
    if (token.trim() === '') throw fail(`has an empty tokenFile ${user.tokenFile}`)
    if (!isValidHeaderValue(token.trim())) {
      throw fail(`has a tokenFile ${user.tokenFile} with a character ${unsendable}`)
    }
    return { type: 'tokenFile', path: user.tokenFile }
  }
  if (hasBasic) {
    return { type: 'basic', username: user.username ?? '', password: user.password ?? '' }
  }
  if (user.exec !== undefined) return { type: 'exec', exec: validateExec(user.exec, fail) }
  return { type: 'none' }
}

/** Checks the selected user's exec block and fills the defaults client-go would. */
function validateExec(exec: KubeconfigExec, fail: (detail: string) => KubeconfigError): ExecConfig {
  if (exec.command === undefined) throw fail('has an exec block without command; set exec.command')
  if (exec.apiVersion === undefined) {
    throw fail('has an exec block without apiVersion; set client.authentication.k8s.io/v1')
  }
  if (!EXEC_API_VERSIONS.has(exec.apiVersion)) {
    throw fail(
      `has exec apiVersion "${exec.apiVersion}", which is not supported; use client.authentication.k8s.io/v1 or v1beta1`
    )
  }
  if (exec.interactiveMode !== undefined && !INTERACTIVE_MODES.has(exec.interactiveMode)) {
    throw fail(
      `has exec interactiveMode "${exec.interactiveMode}"; use Never, IfAvailable or Always`
    )
  }
  return {
    apiVersion: exec.apiVersion,
    command: exec.command,
    args: exec.args,
    env: exec.env,
    provideClusterInfo: exec.provideClusterInfo,
    ...(exec.interactiveMode === undefined ? {} : { interactiveMode: exec.interactiveMode }),
    ...(exec.installHint === undefined ? {} : { installHint: exec.installHint }),
  }
}

/** Reads the pod's service account, or says why this is not a pod, as the in-cluster loader does. */
async function loadInClusterConfig(
  env: NodeJS.ProcessEnv,
  dir: string,
  readFile: ReadTextFile
): Promise<ClusterConfig | string> {
  const host = env['KUBERNETES_SERVICE_HOST']
  const port = env['KUBERNETES_SERVICE_PORT']
  if (host === undefined || host === '' || port === undefined || port === '') {
    return 'KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT not set'
  }
  const tokenPath = path.join(dir, 'token')
  try {
    await readFile(tokenPath)
  } catch (error) {
    // A pod with automountServiceAccountToken: false lands here; fall through to ~/.kube/config.
    return `cannot read ${tokenPath}: ${describeFsError(error)}`
  }
  const caPath = path.join(dir, 'ca.crt')
  let caPem: string | undefined
  try {
    // Without ca.crt the system roots are used, as client-go does after logging the failure.
    caPem = await readOptional(caPath, readFile)
  } catch (error) {
    throw new KubeconfigError(
      `in-cluster config: cannot read ${caPath}: ${describeFsError(error)}; check the service-account mount`,
      { cause: error }
    )
  }
  const namespaceFile = await readOptional(path.join(dir, 'namespace'), readFile).catch(
    () => undefined
  )
  // POD_NAMESPACE first, as client-go's in-cluster namespace lookup does.
  const namespace = nonEmpty(env['POD_NAMESPACE']) ?? nonEmpty(namespaceFile?.trim()) ?? 'default'
  // Bracket an IPv6 service host, as net.JoinHostPort does.
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
  return {
    server: `https://${hostPort}`,
    ...(caPem === undefined ? {} : { caPem }),
    auth: { type: 'tokenFile', path: tokenPath },
    namespace,
    source: 'in-cluster',
  }
}

/** Decodes inline base64 PEM or reads a PEM file, checking that it looks like PEM at all. */
async function pemFrom(
  data: string | undefined,
  file: string | undefined,
  field: string,
  readFile: ReadTextFile,
  fail: (detail: string, cause?: unknown) => KubeconfigError
): Promise<string | undefined> {
  if (data !== undefined) {
    const pem = Buffer.from(data.replace(/\s+/g, ''), 'base64').toString('utf8')
    if (!pem.includes('-----BEGIN ')) {
      throw fail(
        `has ${field}-data that is not base64-encoded PEM; encode the PEM file with base64 -w0`
      )
    }
    return pem
  }
  if (file === undefined) return undefined
  let pem: string
  try {
    pem = await readFile(file)
  } catch (error) {
    throw fail(
      `cannot read ${field} ${file}: ${describeFsError(error)}; fix the path (relative paths are resolved against the kubeconfig's directory)`,
      error
    )
  }
  if (!pem.includes('-----BEGIN ')) throw fail(`has ${field} ${file}, which is not a PEM file`)
  return pem
}

/** Parses one exec block's fields; semantic checks wait until the user is selected. */
function parseExec(
  body: Record<string, unknown>,
  user: string,
  baseDir: string,
  fail: (detail: string) => KubeconfigError
): KubeconfigExec {
  const where = `user "${user}" exec`
  const field = new Fields(body, where, fail)
  const command = field.string('command')
  const envList = field.list('env') ?? []
  const env = envList.map((item, i) => {
    const entry = isJsonObject(item) ? new Fields(item, `${where} env[${i}]`, fail) : undefined
    const name = entry?.string('name')
    if (entry === undefined || name === undefined) {
      throw fail(`${where} env[${i}] must be a mapping with name and value`)
    }
    return { name, value: entry.string('value') ?? '' }
  })
  const args = (field.list('args') ?? []).map((arg, i) => {
    if (typeof arg !== 'string') throw fail(`${where} args[${i}] must be a string`)
    return arg
  })
  return {
    apiVersion: field.string('apiVersion'),
    // client-go resolves a command with a path separator against the kubeconfig's directory, and
    // leaves a bare name to be looked up on PATH.
    command: command?.includes(path.sep) === true ? path.resolve(baseDir, command) : command,
    args,
    env,
    provideClusterInfo: field.boolean('provideClusterInfo') ?? false,
    interactiveMode: field.string('interactiveMode'),
    installHint: field.string('installHint'),
  }
}

/** Yields the `name` and body of each entry of a named list such as `clusters`. */
function namedEntries(
  doc: Record<string, unknown>,
  key: string,
  inner: string,
  fail: (detail: string) => KubeconfigError
): Map<string, Record<string, unknown>> {
  const entries = new Map<string, Record<string, unknown>>()
  const list = new Fields(doc, 'the file', fail).list(key) ?? []
  list.forEach((item, i) => {
    if (!isJsonObject(item)) throw fail(`${key}[${i}] must be a mapping with name and ${inner}`)
    const name = item['name']
    if (typeof name !== 'string' || name === '') throw fail(`${key}[${i}] has no name`)
    if (entries.has(name)) {
      throw fail(`${key} defines "${name}" twice; rename or remove one of them`)
    }
    const body = item[inner] ?? {}
    if (!isJsonObject(body)) throw fail(`${inner} "${name}" must be a mapping`)
    entries.set(name, body)
  })
  return entries
}

/** Typed reads of one YAML mapping, treating null and empty strings as absent as Go does. */
class Fields {
  readonly #body: Record<string, unknown>
  readonly #where: string
  readonly #fail: (detail: string) => KubeconfigError

  constructor(
    body: Record<string, unknown>,
    where: string,
    fail: (detail: string) => KubeconfigError
  ) {
    this.#body = body
    this.#where = where
    this.#fail = fail
  }

  string(key: string): string | undefined {
    const value = this.#body[key]
    if (value === undefined || value === null || value === '') return undefined
    if (typeof value !== 'string') throw this.#wrongType(key, 'a string')
    return value
  }

  boolean(key: string): boolean | undefined {
    const value = this.#body[key]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') throw this.#wrongType(key, 'true or false')
    return value
  }

  list(key: string): readonly unknown[] | undefined {
    const value = this.#body[key]
    if (value === undefined || value === null) return undefined
    if (!Array.isArray(value)) throw this.#wrongType(key, 'a list')
    return value as readonly unknown[]
  }

  record(key: string): Record<string, unknown> | undefined {
    const value = this.#body[key]
    if (value === undefined || value === null) return undefined
    if (!isJsonObject(value)) throw this.#wrongType(key, 'a mapping')
    return value
  }

  #wrongType(key: string, expected: string): KubeconfigError {
    return this.#fail(`${this.#where}: ${key} must be ${expected}`)
  }
}

function addMissing<T>(into: Map<string, T>, from: ReadonlyMap<string, T>): void {
  for (const [name, entry] of from) if (!into.has(name)) into.set(name, entry)
}

/** Accepts `host:port` without a scheme, as client-go does, and drops trailing slashes. */
function normalizeServer(server: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    return undefined
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    return undefined
  }
  return withScheme.replace(/\/+$/, '')
}

/** The YAML parser, loaded on the first kubeconfig: an engine running in a Pod never needs it. */
let yamlParse: ((text: string) => unknown) | undefined

function parse(text: string): unknown {
  if (yamlParse === undefined) {
    // A synchronous load keeps parseKubeconfig synchronous; the package ships CommonJS.
    const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml
    yamlParse = parseQuietly(yaml)
  }
  return yamlParse(text)
}

/**
 * Parses one YAML document without the `yaml` package's process warnings, which would print
 * `(node:…) YAMLWarning` lines around our own message.
 *
 * @remarks
 * What it warned about is decided as client-go's YAML decoding does: an unknown directive
 * (`%FOO`) and a mapping or list used as a key (`? {a: 1}`) are errors; an unknown tag
 * (`!foo x`) leaves the plain value.
 */
function parseQuietly(yaml: typeof Yaml): (text: string) => unknown {
  return (text) => {
    const doc = yaml.parseDocument(text, { logLevel: 'error' })
    const [error] = [...doc.errors, ...doc.warnings.filter((w) => w.code === 'BAD_DIRECTIVE')]
    if (error !== undefined) throw error
    yaml.visit(doc, {
      Pair(_, pair) {
        if (yaml.isCollection(pair.key)) {
          const [offset = 0] = pair.key.range ?? []
          const line = text.slice(0, offset).split('\n').length
          throw new Error(`a mapping or list used as a key at line ${line}`)
        }
      },
    })
    const value: unknown = doc.toJS()
    return value
  }
}

/** Reads a kubeconfig, or returns undefined when it does not exist. */
async function readKubeconfigFile(
  file: string,
  readFile: ReadTextFile
): Promise<string | undefined> {
  try {
    return await readOptional(file, readFile)
  } catch (error) {
    throw new KubeconfigError(`kubeconfig ${file}: cannot read: ${describeFsError(error)}`, {
      file,
      cause: error,
    })
  }
}

/** Reads a file, returning undefined when it (or a parent directory) does not exist. */
async function readOptional(file: string, readFile: ReadTextFile): Promise<string | undefined> {
  try {
    return await readFile(file)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

function readUtf8(file: string): Promise<string> {
  return readFileFromDisk(file, 'utf8')
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}

/** Shortens a file system error to its code and meaning, without repeating the path. */
function describeFsError(error: unknown): string {
  const code = errorCode(error)
  const meanings: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'a parent is not a directory',
  }
  const meaning = code === undefined ? undefined : meanings[code]
  if (code !== undefined && meaning !== undefined) return `${code} (${meaning})`
  return error instanceof Error ? error.message : 'unknown error'
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value
}

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/:$/, '')
}
