import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  defaultStorageClass,
  HOST_PATH_PROVISIONER,
  privateVolumesCommand,
  PROVISIONER_ROOT,
} from './host-path-storage.js'

describe('privateVolumesCommand', () => {
  it('binds the cluster volumes over the provisioner root, then execs the command itself', () => {
    const { command, args } = privateVolumesCommand('/c', '/bin/kcm', ['--a', '--b'], true)
    assert.equal(command, 'unshare')
    assert.deepEqual(args.slice(0, 4), ['--mount', '--propagation', 'private', '--'])
    const script = args[6] ?? ''
    assert.match(script, new RegExp(`^mount --bind "\\$0" ${PROVISIONER_ROOT} && exec "\\$@"$`))
    // $0 is the volumes dir; "$@" is the command with its arguments, so argv[0] stays /bin/kcm.
    assert.deepEqual(args.slice(7), ['/c/volumes', '/bin/kcm', '--a', '--b'])
  })

  it('adds a user namespace that maps the caller to root when not root', () => {
    const { args } = privateVolumesCommand('/c', '/bin/kcm', [], false)
    assert.deepEqual(args.slice(0, 3), ['--user', '--map-root-user', '--mount'])
  })
})

describe('defaultStorageClass', () => {
  it('is the default class, provisioned by the host-path plugin, deleted with its claim', () => {
    const sc = defaultStorageClass()
    assert.equal(sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true')
    assert.equal(sc['provisioner'], HOST_PATH_PROVISIONER)
    assert.equal(sc['reclaimPolicy'], 'Delete')
  })
})
