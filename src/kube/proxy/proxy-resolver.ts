/**
 * Which proxy, if any, a request URL goes through: from the environment as Go's
 * `http.ProxyFromEnvironment` decides, or one fixed proxy as a kubeconfig `proxy-url` sets.
 *
 * @module
 */
import { parseNoProxy } from './no-proxy-matcher.js'

/** Returns the proxy for a request URL, or undefined to connect directly. */
export type ProxyResolver = (target: URL) => URL | undefined

/** The proxy settings of an environment, with Go's precedence already applied. */
export interface ProxyEnvironment {
  /** `HTTP_PROXY`, else `http_proxy`: the proxy of `http:` requests. */
  readonly httpProxy: string
  /** `HTTPS_PROXY`, else `https_proxy`: the proxy of `https:` requests. */
  readonly httpsProxy: string
  /** `NO_PROXY`, else `no_proxy`. */
  readonly noProxy: string
  /** `REQUEST_METHOD` is set: Go then refuses `HTTP_PROXY` (CGI header injection, httpoxy). */
  readonly cgi: boolean
}

/** Raised when a proxy setting cannot be used; the message names the setting and the fix. */
export class ProxyConfigError extends Error {
  override readonly name = 'ProxyConfigError'
}

function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): string {
  for (const name of names) {
    const value = env[name]
    if (value !== undefined && value !== '') return value
  }
  return ''
}

/** Reads the proxy variables as Go does: the upper-case name wins when both are set. */
export function proxyEnvironmentFrom(env: NodeJS.ProcessEnv): ProxyEnvironment {
  return {
    httpProxy: firstSet(env, ['HTTP_PROXY', 'http_proxy']),
    httpsProxy: firstSet(env, ['HTTPS_PROXY', 'https_proxy']),
    noProxy: firstSet(env, ['NO_PROXY', 'no_proxy']),
    cgi: (env['REQUEST_METHOD'] ?? '') !== '',
  }
}

/**
 * Parses a proxy address as Go does: a value without a scheme (`proxy:3128`) means `http://`.
 *
 * @throws ProxyConfigError when the value is no URL, or its scheme is not `http` or `https`.
 */
export function parseProxyUrl(value: string, setting: string): URL {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  // Go retries with http:// when the value has no scheme or host: `proxy:3128` parses as a URL
  // whose scheme is `proxy:` and whose host is empty.
  if (url === undefined || url.host === '') {
    try {
      url = new URL(`http://${value}`)
    } catch {
      throw new ProxyConfigError(
        `${setting} ${JSON.stringify(value)} is not a proxy URL; use e.g. http://proxy.example:3128`
      )
    }
  }
  if (url.protocol === 'socks5:' || url.protocol === 'socks5h:') {
    throw new ProxyConfigError(
      `${setting} ${JSON.stringify(value)}: SOCKS5 proxies are not supported by metacontroller-ts; use an http:// or https:// proxy`
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProxyConfigError(
      `${setting} ${JSON.stringify(value)}: scheme ${url.protocol.slice(0, -1)} is not supported; use http:// or https://`
    )
  }
  return url
}

function defaultPort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80'
}

/**
 * The resolver of an environment's proxy settings, or undefined when none is set (every request
 * goes direct, and callers can skip the proxy machinery).
 *
 * @throws ProxyConfigError when a proxy variable is set but unusable, so a typo fails at startup.
 */
export function environmentProxyResolver(env: ProxyEnvironment): ProxyResolver | undefined {
  const http = env.httpProxy === '' ? undefined : parseProxyUrl(env.httpProxy, 'HTTP_PROXY')
  const https = env.httpsProxy === '' ? undefined : parseProxyUrl(env.httpsProxy, 'HTTPS_PROXY')
  if (http === undefined && https === undefined) return undefined
  const noProxy = parseNoProxy(env.noProxy)
  return (target) => {
    const proxy =
      target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined
    if (proxy === undefined) return undefined
    if (target.protocol === 'http:' && env.cgi) {
      throw new ProxyConfigError(
        'refusing to use HTTP_PROXY in a CGI environment (REQUEST_METHOD is set); see golang.org/s/cgihttpproxy'
      )
    }
    return noProxy.bypasses(target.hostname, defaultPort(target)) ? undefined : proxy
  }
}

/** A resolver that sends every request through `proxy` (kubeconfig `proxy-url`: no exemptions). */
export function fixedProxyResolver(proxy: URL): ProxyResolver {
  return () => proxy
}

let processResolver: { value: ProxyResolver | undefined } | undefined

/**
 * The resolver of this process's environment, read once (Go's `ProxyFromEnvironment` caches the
 * same way, so a variable changed later does not take effect).
 */
export function processProxyResolver(): ProxyResolver | undefined {
  processResolver ??= { value: environmentProxyResolver(proxyEnvironmentFrom(process.env)) }
  return processResolver.value
}

/**
 * The proxy of a cluster as client-go picks it: the kubeconfig's `proxy-url` when set (every
 * request, no exemptions), else `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` of the process.
 */
export function clientGoProxyResolver(proxyUrl: string | undefined): ProxyResolver | undefined {
  if (proxyUrl !== undefined) return fixedProxyResolver(parseProxyUrl(proxyUrl, 'proxy-url'))
  return processProxyResolver()
}
