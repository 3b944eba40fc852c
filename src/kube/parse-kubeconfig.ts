/**
 * Parsing kubeconfig files (strictly typed, as client-go decodes them) and merging several with
 * client-go's rules.
 *
 * @module
 */
import path from 'node:path'
import { createRequire } from 'node:module'
import type * as Yaml from 'yaml'
import { isJsonObject } from '../core/kube-object.js'
import { KubeconfigError } from './kubeconfig-error.js'
import type {
  Kubeconfig,
  KubeconfigCluster,
  KubeconfigContext,
  KubeconfigExec,
  KubeconfigUser,
} from './kubeconfig.js'

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

function firstLine(message: string): string {
  return (message.split('\n')[0] ?? message).replace(/:$/, '')
}
