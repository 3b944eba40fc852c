// A throwaway PKI for hook TLS tests, made with the openssl CLI (Node's crypto cannot issue X.509
// certificates): a CA, a server certificate for 127.0.0.1 and localhost, a client certificate,
// and a second, unrelated CA whose trust must not be enough.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** PEM texts of the test PKI. */
export interface TestPki {
  readonly caCert: string
  readonly serverCert: string
  readonly serverKey: string
  readonly clientCert: string
  readonly clientKey: string
  /** A CA that signed nothing here: trusting only it must fail the handshake. */
  readonly otherCaCert: string
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']

function issue(dir: string, name: string, subject: string, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), extensions)
  openssl(dir, [
    'req',
    ...EC_KEY,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  ])
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    `${name}.crt`,
    '-extfile',
    `${name}.ext`,
  ])
}

/** Generates the PKI in a temporary directory, which is removed before returning. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-pki-'))
  try {
    for (const ca of ['ca', 'other-ca']) {
      openssl(dir, [
        'req',
        '-x509',
        ...EC_KEY,
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.crt`,
        '-days',
        '2',
        '-subj',
        `/CN=metactl test ${ca}`,
      ])
    }
    issue(
      dir,
      'server',
      '/CN=localhost',
      'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
    )
    issue(dir, 'client', '/CN=metactl-client', 'extendedKeyUsage=clientAuth\n')
    const read = (file: string): string => readFileSync(join(dir, file), 'utf8')
    return {
      caCert: read('ca.crt'),
      serverCert: read('server.crt'),
      serverKey: read('server.key'),
      clientCert: read('client.crt'),
      clientKey: read('client.key'),
      otherCaCert: read('other-ca.crt'),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
