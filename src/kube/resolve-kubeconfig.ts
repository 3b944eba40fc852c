/**
 * Turning a parsed kubeconfig into a {@link ClusterConfig}: the selected context, its cluster's
 * server and TLS material, and its user's credentials (certificates, tokens, exec plugins).
 *
 * @module
 */
import path from 'node:path'
import type { AuthConfig, ClusterConfig, ExecConfig } from './cluster-config.js'
import { isValidHeaderValue } from './header-value.js'
import { parseProxyUrl } from './proxy/proxy-resolver.js'
import { KubeconfigError } from './kubeconfig-error.js'
import { describeFsError, nonEmpty, readUtf8 } from './read-text-file.js'
import type { ReadTextFile } from './read-text-file.js'
import type {
  Kubeconfig,
  KubeconfigCluster,
  KubeconfigContext,
  KubeconfigExec,
  KubeconfigUser,
} from './kubeconfig.js'

/** The exec plugin API versions we speak; v1alpha1 was removed from client-go in 1.24. */
const EXEC_API_VERSIONS = new Set([
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
])

const INTERACTIVE_MODES = new Set(['Never', 'IfAvailable', 'Always'])

/** Options of {@link resolveKubeconfig}. */
export interface ResolveKubeconfigOptions {
  /** Context to use instead of `current-context`. */
  readonly context?: string | undefined
  /** Reads certificate and token files; `fs.readFile` as UTF-8 by default. */
  readonly readFile?: ReadTextFile
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
