/**
 * Resolves a webhook's TLS and auth settings (its own, or the first matching
 * `spec.endpointConfigs` entry) into what the HTTP client needs: trusted CAs, a client
 * certificate and an `Authorization` header, read from Secrets and ConfigMaps.
 *
 * @remarks
 * Done when a hosted controller is built, as upstream; every problem (a missing Secret or key, a
 * PEM that is no certificate, a key that does not match its certificate) is a
 * {@link WebhookCredentialError} naming the webhook and the object, so the controller is not
 * created and nothing is changed.
 *
 * @module
 */
import { X509Certificate } from 'node:crypto'
import { createSecureContext } from 'node:tls'
import type { KubeObject } from '../../core/kube-object.js'
import type { WebhookSpec } from '../../api/controller-spec-fields.js'
import type {
  EndpointConfigSpec,
  ObjectKeyRef,
  WebhookSecuritySpec,
} from '../../api/webhook-security-spec.js'
import { messageOf } from '../../core/message-of.js'

/** A Secret or ConfigMap a webhook's settings name. */
export type CredentialKind = 'Secret' | 'ConfigMap'

/** Reads the Secrets and ConfigMaps webhook settings name. */
export interface CredentialReader {
  /** Returns the object, or undefined when it does not exist. */
  read(kind: CredentialKind, namespace: string, name: string): Promise<KubeObject | undefined>
}

/** What the HTTP client of one webhook needs. */
export interface WebhookTransport {
  /** Extra request headers (`authorization`). */
  readonly headers: Readonly<Record<string, string>>
  /** TLS options; undefined means the system roots and no client certificate. */
  readonly tls?: {
    readonly ca?: string
    readonly cert?: string
    readonly key?: string
  }
}

/** A webhook's TLS or auth settings cannot be resolved. */
export class WebhookCredentialError extends Error {
  override readonly name = 'WebhookCredentialError'
}

/**
 * Returns the first `endpointConfigs` entry whose host matches the URL's, as upstream compares
 * them: case-insensitively, against `host[:port]` as written, `hostname:<default port>` when the
 * URL has no port, or the bare hostname when the URL's port is the scheme's default.
 */
export function matchEndpointConfig(
  url: string,
  configs: readonly EndpointConfigSpec[]
): EndpointConfigSpec | undefined {
  const parsed = new URL(url)
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : ''
  // WHATWG URL drops a default port; the raw authority is what the user wrote.
  const rawHost = (
    /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url)?.[1] ?? ''
  ).toLowerCase()
  const hostname = parsed.hostname.toLowerCase()
  const explicitPort = rawHost.startsWith('[')
    ? rawHost.slice(rawHost.indexOf(']') + 2)
    : rawHost.includes(':')
      ? rawHost.slice(rawHost.lastIndexOf(':') + 1)
      : ''
  const candidates = new Set([rawHost])
  if (explicitPort === '' && defaultPort !== '') candidates.add(`${hostname}:${defaultPort}`)
  if (explicitPort !== '' && explicitPort === defaultPort) candidates.add(hostname)
  return configs.find((config) => candidates.has(config.host.toLowerCase()))
}

/** The settings that apply to a webhook: its own if it sets any, else a matching endpoint's. */
export function webhookSecurity(
  webhook: WebhookSpec,
  endpointConfigs: readonly EndpointConfigSpec[] | undefined
): WebhookSecuritySpec | undefined {
  // No field-level merge, as upstream: a webhook with any setting of its own uses only those.
  if (webhook.security !== undefined) return webhook.security
  return matchEndpointConfig(webhook.url, endpointConfigs ?? [])
}

async function readKey(
  reader: CredentialReader,
  kind: CredentialKind,
  ref: ObjectKeyRef
): Promise<string> {
  const object = await reader.read(kind, ref.namespace, ref.name)
  if (object === undefined) {
    throw new WebhookCredentialError(`${kind} ${ref.namespace}/${ref.name} not found`)
  }
  const data = object['data'] as Record<string, string> | undefined
  const binary = object['binaryData'] as Record<string, string> | undefined
  const fromBase64 = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : Buffer.from(text, 'base64').toString('utf8')
  // Secret data is base64; ConfigMap data is text and its binaryData is base64.
  const value =
    kind === 'Secret'
      ? fromBase64(data?.[ref.key])
      : (data?.[ref.key] ?? fromBase64(binary?.[ref.key]))
  if (value === undefined || value === '') {
    throw new WebhookCredentialError(
      `${kind} ${ref.namespace}/${ref.name} has no key "${ref.key}" (or it is empty)`
    )
  }
  return value
}

/** Checks that `pem` holds at least one X.509 certificate and that each parses. */
function checkCertificates(pem: string, what: string): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) {
    throw new WebhookCredentialError(`${what}: no valid PEM-encoded certificates`)
  }
  for (const block of blocks) {
    try {
      new X509Certificate(block)
    } catch (error) {
      throw new WebhookCredentialError(`${what}: invalid certificate: ${messageOf(error)}`)
    }
  }
}

async function resolveTls(
  security: WebhookSecuritySpec,
  reader: CredentialReader
): Promise<WebhookTransport['tls']> {
  const { caBundle, clientTLS } = security
  let ca: string | undefined
  if (caBundle !== undefined) {
    ca =
      caBundle.source === 'inline'
        ? caBundle.pem
        : await readKey(reader, caBundle.source === 'secret' ? 'Secret' : 'ConfigMap', caBundle)
    checkCertificates(ca, 'caBundle')
  }
  if (clientTLS === undefined) return ca === undefined ? undefined : { ca }
  const ref = { namespace: clientTLS.namespace, name: clientTLS.name }
  const cert = await readKey(reader, 'Secret', { ...ref, key: clientTLS.certKey })
  const key = await readKey(reader, 'Secret', { ...ref, key: clientTLS.privateKeyKey })
  checkCertificates(cert, `clientTLS Secret ${ref.namespace}/${ref.name}`)
  try {
    // Parses the pair as Go's tls.X509KeyPair does: a key that does not match fails here.
    createSecureContext({ cert, key })
  } catch (error) {
    throw new WebhookCredentialError(
      `clientTLS Secret ${ref.namespace}/${ref.name}: invalid key pair: ${messageOf(error)}`
    )
  }
  return { ...(ca === undefined ? {} : { ca }), cert, key }
}

async function resolveHeaders(
  security: WebhookSecuritySpec,
  reader: CredentialReader
): Promise<Record<string, string>> {
  const { authorization, basicAuth } = security
  if (authorization !== undefined) {
    const token = (await readKey(reader, 'Secret', authorization.secret)).trim()
    return { authorization: `${authorization.type} ${token}` }
  }
  if (basicAuth === undefined) return {}
  const ref = { namespace: basicAuth.namespace, name: basicAuth.name }
  const user = (await readKey(reader, 'Secret', { ...ref, key: basicAuth.usernameKey })).trim()
  const password = (await readKey(reader, 'Secret', { ...ref, key: basicAuth.passwordKey })).trim()
  if (user.includes(':')) {
    throw new WebhookCredentialError(
      `basicAuth Secret ${ref.namespace}/${ref.name}: the username must not contain ":"`
    )
  }
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` }
}

/**
 * Resolves the TLS and auth settings of one webhook.
 *
 * @throws {@link WebhookCredentialError} naming the webhook and what is missing or invalid.
 */
export async function resolveWebhookTransport(
  webhook: WebhookSpec,
  endpointConfigs: readonly EndpointConfigSpec[] | undefined,
  reader: CredentialReader
): Promise<WebhookTransport> {
  const security = webhookSecurity(webhook, endpointConfigs)
  if (security === undefined) return { headers: {} }
  try {
    const tls = await resolveTls(security, reader)
    const headers = await resolveHeaders(security, reader)
    return { headers, ...(tls === undefined ? {} : { tls }) }
  } catch (error) {
    if (!(error instanceof WebhookCredentialError)) throw error
    throw new WebhookCredentialError(`webhook ${webhook.url}: ${error.message}`, { cause: error })
  }
}
