/**
 * The TLS, authentication and ETag fields of a webhook (`caBundle`, `clientTLS`,
 * `authorization`, `basicAuth`, `etag`) and of `spec.endpointConfigs[]`, parsed with the CRD's
 * defaults. Only the shape is checked here; the Secrets and ConfigMaps they name are read by the
 * engine when it builds the hosted controller.
 *
 * @module
 */
import type { JsonObject } from '../core/kube-object.js'
import { MAX_TIMER_DELAY_MS } from '../core/timeout-signal.js'
import { ControllerSpecError } from './controller-spec-error.js'
import { field, optionalObject, optionalString, requiredString } from './spec-field-readers.js'

/** A Secret or ConfigMap key, by namespace and name. */
export interface ObjectKeyRef {
  readonly namespace: string
  readonly name: string
  readonly key: string
}

/** Where the trusted CA PEM comes from: exactly one source. */
export type CaBundleSpec =
  | { readonly source: 'inline'; readonly pem: string }
  | ({ readonly source: 'secret' | 'configMap' } & ObjectKeyRef)

/** A client certificate and key from a Secret (mTLS). */
export interface ClientTlsSpec {
  readonly namespace: string
  readonly name: string
  readonly certKey: string
  readonly privateKeyKey: string
}

/** `Authorization: <type> <token>`, the token from a Secret key. */
export interface AuthorizationSpec {
  readonly type: string
  readonly secret: ObjectKeyRef
}

/** `Authorization: Basic …` from two keys of one Secret. */
export interface BasicAuthSpec {
  readonly namespace: string
  readonly name: string
  readonly usernameKey: string
  readonly passwordKey: string
}

/** The TLS and auth settings of one webhook or endpoint. */
export interface WebhookSecuritySpec {
  readonly caBundle?: CaBundleSpec
  readonly clientTLS?: ClientTlsSpec
  readonly authorization?: AuthorizationSpec
  readonly basicAuth?: BasicAuthSpec
}

/** One `spec.endpointConfigs[]` entry: settings for every webhook whose host matches. */
export interface EndpointConfigSpec extends WebhookSecuritySpec {
  readonly host: string
}

/** `webhook.etag`: response caching by `If-None-Match`. */
export interface EtagSpec {
  readonly enabled: boolean
  /** Entries older than this are not used; undefined (or 0 in the spec) means never. */
  readonly cacheTimeoutMs: number | undefined
  /** How often expired entries are dropped; undefined means no cleanup. */
  readonly cacheCleanupMs: number | undefined
}

function secretRef(object: JsonObject, path: string): JsonObject {
  return field(object['secretRef'], `${path}.secretRef`)
}

function keyWithDefault(object: JsonObject, key: string, path: string, fallback: string): string {
  const value = optionalString(object, key, path)
  return value === undefined || value === '' ? fallback : value
}

function parseCaBundle(value: unknown, path: string): CaBundleSpec | undefined {
  const bundle = optionalObject(value, path)
  if (bundle === undefined) return undefined
  const inline = optionalString(bundle, 'inline', path)
  const secret = optionalObject(bundle['secretRef'], `${path}.secretRef`)
  const configMap = optionalObject(bundle['configMapRef'], `${path}.configMapRef`)
  const sources = [inline, secret, configMap].filter((s) => s !== undefined && s !== '').length
  if (sources !== 1) {
    throw new ControllerSpecError(path, 'must set exactly one of inline, secretRef or configMapRef')
  }
  if (inline !== undefined && inline !== '') return { source: 'inline', pem: inline }
  const ref = secret ?? configMap
  if (ref === undefined) throw new ControllerSpecError(path, 'has no source')
  const at = `${path}.${secret === undefined ? 'configMapRef' : 'secretRef'}`
  return {
    source: secret === undefined ? 'configMap' : 'secret',
    namespace: requiredString(ref, 'namespace', at),
    name: requiredString(ref, 'name', at),
    key: keyWithDefault(ref, 'key', at, 'ca.crt'),
  }
}

function parseClientTls(value: unknown, path: string): ClientTlsSpec | undefined {
  const tls = optionalObject(value, path)
  if (tls === undefined) return undefined
  const ref = secretRef(tls, path)
  return {
    namespace: requiredString(ref, 'namespace', `${path}.secretRef`),
    name: requiredString(ref, 'name', `${path}.secretRef`),
    certKey: keyWithDefault(tls, 'certKey', path, 'tls.crt'),
    privateKeyKey: keyWithDefault(tls, 'privateKeyKey', path, 'tls.key'),
  }
}

function parseAuthorization(value: unknown, path: string): AuthorizationSpec | undefined {
  const auth = optionalObject(value, path)
  if (auth === undefined) return undefined
  // Upstream trims the type and falls back to Bearer for an empty one.
  const type = (optionalString(auth, 'type', path) ?? '').trim() || 'Bearer'
  if (type.toLowerCase() === 'basic') {
    throw new ControllerSpecError(`${path}.type`, 'Basic is not allowed here: use basicAuth')
  }
  const ref = secretRef(auth, path)
  const at = `${path}.secretRef`
  return {
    type,
    secret: {
      namespace: requiredString(ref, 'namespace', at),
      name: requiredString(ref, 'name', at),
      key: requiredString(ref, 'key', at),
    },
  }
}

function parseBasicAuth(value: unknown, path: string): BasicAuthSpec | undefined {
  const basic = optionalObject(value, path)
  if (basic === undefined) return undefined
  const ref = secretRef(basic, path)
  return {
    namespace: requiredString(ref, 'namespace', `${path}.secretRef`),
    name: requiredString(ref, 'name', `${path}.secretRef`),
    usernameKey: keyWithDefault(basic, 'usernameKey', path, 'username'),
    passwordKey: keyWithDefault(basic, 'passwordKey', path, 'password'),
  }
}

/**
 * Parses the TLS and auth fields of a webhook or endpoint object at `path`; undefined when it
 * sets none of them.
 *
 * @throws {@link ControllerSpecError} for a malformed field, or `authorization` together with
 * `basicAuth`.
 */
export function parseWebhookSecurity(
  object: JsonObject,
  path: string
): WebhookSecuritySpec | undefined {
  const caBundle = parseCaBundle(object['caBundle'], `${path}.caBundle`)
  const clientTLS = parseClientTls(object['clientTLS'], `${path}.clientTLS`)
  const authorization = parseAuthorization(object['authorization'], `${path}.authorization`)
  const basicAuth = parseBasicAuth(object['basicAuth'], `${path}.basicAuth`)
  if (authorization !== undefined && basicAuth !== undefined) {
    throw new ControllerSpecError(path, 'authorization and basicAuth cannot both be set')
  }
  if (
    caBundle === undefined &&
    clientTLS === undefined &&
    authorization === undefined &&
    basicAuth === undefined
  ) {
    return undefined
  }
  return {
    ...(caBundle === undefined ? {} : { caBundle }),
    ...(clientTLS === undefined ? {} : { clientTLS }),
    ...(authorization === undefined ? {} : { authorization }),
    ...(basicAuth === undefined ? {} : { basicAuth }),
  }
}

/** Parses `spec.endpointConfigs`; absent or null means none. */
export function parseEndpointConfigs(value: unknown, path: string): EndpointConfigSpec[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new ControllerSpecError(path, 'must be a list')
  return value.map((raw: unknown, i) => {
    const at = `${path}[${i}]`
    const entry = field(raw, at)
    return { host: requiredString(entry, 'host', at), ...parseWebhookSecurity(entry, at) }
  })
}

function optionalSeconds(object: JsonObject, key: string, path: string): number | undefined {
  const value = object[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ControllerSpecError(`${path}.${key}`, 'must be a non-negative integer')
  }
  return value
}

/** Parses `webhook.etag`; undefined when absent or not enabled. */
export function parseEtag(value: unknown, path: string): EtagSpec | undefined {
  const etag = optionalObject(value, path)
  if (etag === undefined) return undefined
  const enabled = etag['enabled']
  if (enabled !== undefined && enabled !== null && typeof enabled !== 'boolean') {
    throw new ControllerSpecError(`${path}.enabled`, 'must be a boolean')
  }
  const timeout = optionalSeconds(etag, 'cacheTimeoutSeconds', path)
  const cleanup = optionalSeconds(etag, 'cacheCleanupSeconds', path)
  if (enabled !== true) return undefined
  const cacheTimeoutMs = timeout === undefined || timeout === 0 ? undefined : timeout * 1000
  // Upstream crashes when a timeout is set without a cleanup period (a nil dereference); here the
  // cleanup then runs once per timeout period.
  const cleanupSeconds = cacheTimeoutMs === undefined ? undefined : (cleanup ?? timeout)
  return {
    enabled: true,
    cacheTimeoutMs,
    // The cleanup runs on an interval timer, which cannot wait longer than about 24.8 days.
    cacheCleanupMs:
      cleanupSeconds === undefined || cleanupSeconds === 0
        ? undefined
        : Math.min(cleanupSeconds * 1000, MAX_TIMER_DELAY_MS),
  }
}
