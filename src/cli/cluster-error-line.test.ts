import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { NotFoundError, UnauthorizedError } from '../kube/api-error.js'
import { ConnectionError } from '../kube/connection-error.js'
import { KubeconfigError } from '../kube/kubeconfig-error.js'
import { MissingBinariesError } from '../cluster/control-plane-binaries.js'
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
