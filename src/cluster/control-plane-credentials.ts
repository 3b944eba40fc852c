/**
 * The credentials of a local control plane: the static tokens of its two users, the
 * service-account signing key pair, and the kubeconfig that hands them out.
 *
 * @module
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

/** User name of the second, unprivileged identity in the generated kubeconfig. */
export const UNPRIVILEGED_USER = 'metactl-user'
/** Kubeconfig context of {@link UNPRIVILEGED_USER} (in group `metactl:users`, no RBAC grants). */
export const UNPRIVILEGED_CONTEXT = 'metactl-user'

/** The bearer tokens of a control plane's admin and unprivileged users. */
export interface ControlPlaneTokens {
  readonly admin: string
  readonly user: string
}

/** Draws fresh random tokens for both users. */
export function newControlPlaneTokens(): ControlPlaneTokens {
  return { admin: randomBytes(24).toString('hex'), user: randomBytes(24).toString('hex') }
}

/**
 * Writes `tokens.csv` for kube-apiserver's token file and, once per directory, the
 * service-account key pair (`sa.key`, `sa.pub`) into `pki`.
 */
export function writeControlPlaneCredentials(pki: string, tokens: ControlPlaneTokens): void {
  // system:masters is bound to cluster-admin by RBAC bootstrap, so the admin token can do
  // anything; the second user has no permissions until a test grants them (RBAC, APF tests).
  writeFileSync(
    join(pki, 'tokens.csv'),
    `${tokens.admin},admin,admin-uid,system:masters\n` +
      `${tokens.user},${UNPRIVILEGED_USER},${UNPRIVILEGED_USER}-uid,metactl:users\n`,
    { mode: 0o600 }
  )
  if (existsSync(join(pki, 'sa.key'))) return
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  })
  writeFileSync(join(pki, 'sa.key'), privateKey, { mode: 0o600 })
  writeFileSync(join(pki, 'sa.pub'), publicKey, { mode: 0o600 })
}

/**
 * Writes a kubeconfig at `path` whose current context is the admin user and whose second
 * context ({@link UNPRIVILEGED_CONTEXT}) is the unprivileged one, both trusting `caPath`.
 */
export function writeControlPlaneKubeconfig(
  path: string,
  server: string,
  caPath: string,
  tokens: ControlPlaneTokens
): void {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'metactl-local', cluster: { server, 'certificate-authority': caPath } }],
    users: [
      { name: 'metactl-admin', user: { token: tokens.admin } },
      { name: UNPRIVILEGED_USER, user: { token: tokens.user } },
    ],
    contexts: [
      {
        name: 'metactl-local',
        context: { cluster: 'metactl-local', user: 'metactl-admin', namespace: 'default' },
      },
      {
        name: UNPRIVILEGED_CONTEXT,
        context: { cluster: 'metactl-local', user: UNPRIVILEGED_USER, namespace: 'default' },
      },
    ],
    'current-context': 'metactl-local',
    preferences: {},
  }
  writeFileSync(path, stringify(kubeconfig), { mode: 0o600 })
}
