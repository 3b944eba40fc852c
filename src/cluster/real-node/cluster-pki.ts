/**
 * The real node's cluster PKI, made with the openssl CLI (Node's crypto cannot issue X.509
 * certificates): a CA and an API server certificate valid for every address the server is reached
 * by: 127.0.0.1 (host forwarder and components), the node's address (Pods, the `kubernetes`
 * Endpoints) and the `kubernetes` Service's address and names.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KUBERNETES_SERVICE_IP, NODE_IP } from './real-node-layout.js'

/** Paths of the PKI files. */
export interface ClusterPki {
  readonly caFile: string
  readonly certFile: string
  readonly keyFile: string
}

/** The subjectAltName list of the API server certificate. */
export const API_SERVER_SANS: readonly string[] = [
  'IP:127.0.0.1',
  `IP:${NODE_IP}`,
  `IP:${KUBERNETES_SERVICE_IP}`,
  'DNS:localhost',
  'DNS:kubernetes',
  'DNS:kubernetes.default',
  'DNS:kubernetes.default.svc',
  'DNS:kubernetes.default.svc.cluster.local',
]

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Makes the CA and the API server certificate in `dir`, or reuses the ones already there. */
export function ensureClusterPki(dir: string): ClusterPki {
  mkdirSync(dir, { recursive: true })
  const pki = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'serving.crt'),
    keyFile: join(dir, 'serving.key'),
  }
  if (existsSync(pki.caFile) && existsSync(pki.certFile) && existsSync(pki.keyFile)) return pki
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  openssl(
    dir,
    ['req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650'].concat([
      '-subj',
      '/CN=metactl-real-node-ca',
    ])
  )
  openssl(dir, [
    'req',
    ...key,
    '-keyout',
    'serving.key',
    '-out',
    'serving.csr',
    '-subj',
    '/CN=kube-apiserver',
  ])
  writeFileSync(
    join(dir, 'serving.ext'),
    `subjectAltName=${API_SERVER_SANS.join(',')}\nextendedKeyUsage=serverAuth\n`
  )
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'serving.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-out',
    'serving.crt',
    '-extfile',
    'serving.ext',
  ])
  return pki
}
