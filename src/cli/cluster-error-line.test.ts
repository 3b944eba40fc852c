import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { NotFoundError, UnauthorizedError } from '../kube/api-error.js'
import { ConnectionError } from '../kube/connection-error.js'
import { KubeconfigError } from '../kube/kubeconfig-error.js'
import { MissingBinariesError } from '../cluster/control-plane-binaries.js'
import { ProxyConfigError } from '../kube/proxy/proxy-resolver.js'
import { ProxyTunnelError } from '../kube/proxy/proxy-tunnel-connector.js'
import { clusterErrorLine } from './cluster-error-line.js'

const refused = new ConnectionError(
  'GET /api: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1',
  'https://127.0.0.1:1',
  'ECONNREFUSED'
)

describe('clusterErrorLine', () => {
  it('turns an unreachable API server into what to run, naming the server and the cause', () => {
    assert.equal(
      clusterErrorLine(refused),
      'cannot reach the Kubernetes API server at https://127.0.0.1:1 (ECONNREFUSED): start the ' +
        'local cluster with `metactl cluster up` (then export the KUBECONFIG it prints), or pick ' +
        'a running cluster with --kubeconfig/--context'
    )
  })

  it('finds the connection failure behind errors that wrap it', () => {
    const wrapped = new Error('installing CRDs failed', { cause: refused })
    assert.match(clusterErrorLine(wrapped) ?? '', /^cannot reach the Kubernetes API server/)
  })

  it('keeps kubeconfig and missing-binaries messages, on one line', () => {
    assert.equal(
      clusterErrorLine(new KubeconfigError('no kubeconfig found:\n  pass --kubeconfig')),
      'no kubeconfig found: pass --kubeconfig'
    )
    assert.equal(clusterErrorLine(new MissingBinariesError('build them')), 'build them')
  })

  it('names the proxy when the API server is unreachable through it, and a bad proxy setting', () => {
    const tunnel = new ProxyTunnelError('proxy http://p:3128: CONNECT api:443: 403 Forbidden')
    const error = new ConnectionError('GET /api: failed', 'https://api:443', undefined, {
      cause: tunnel,
    })
    assert.equal(
      clusterErrorLine(error),
      'cannot reach the Kubernetes API server at https://api:443 through the proxy ' +
        'http://p:3128: CONNECT api:443: 403 Forbidden; check HTTPS_PROXY/NO_PROXY or the ' +
        'kubeconfig proxy-url'
    )
    assert.equal(
      clusterErrorLine(new ProxyConfigError('HTTPS_PROXY "x" is bad')),
      'HTTPS_PROXY "x" is bad'
    )
  })

  it('says a 401 is about credentials', () => {
    const error = new UnauthorizedError('Unauthorized', {
      statusCode: 401,
      reason: 'Unauthorized',
      request: { method: 'GET', path: '/api' },
    })
    assert.match(clusterErrorLine(error) ?? '', /refused the credentials \(401 Unauthorized/)
  })

  it('leaves every other error to the caller', () => {
    const notFound = new NotFoundError('not found', {
      statusCode: 404,
      reason: 'NotFound',
      request: { method: 'GET', path: '/x' },
    })
    assert.equal(clusterErrorLine(notFound), undefined)
    assert.equal(clusterErrorLine(new TypeError('bug')), undefined)
    assert.equal(clusterErrorLine('text'), undefined)
  })
})
