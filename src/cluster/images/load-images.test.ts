import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { realNodeLayout } from '../real-node/real-node-layout.js'
import { writeRealNodeState } from '../real-node/real-node-state.js'
import {
  archiveImageNames,
  classifyLoadSources,
  ImageLoadError,
  isRegularFile,
  normalizeImageName,
  runningContainerd,
} from './load-images.js'

describe('classifyLoadSources', () => {
  const files = new Set(['engine.tar', '/abs/hook.tar'])
  const isFile = (path: string): boolean => files.has(path)

  it('takes an existing file for an archive, resolved to an absolute path', () => {
    assert.deepEqual(classifyLoadSources(['engine.tar', '/abs/hook.tar'], isFile), [
      { kind: 'archive', path: resolve('engine.tar') },
      { kind: 'archive', path: '/abs/hook.tar' },
    ])
  })

  it('takes any other valid reference for an image of the builder store', () => {
    const refs = [
      'podservice-hook:dev',
      'ghcr.io/metacontroller-ts/metacontroller-ts:0.1.0',
      'localhost:5000/team/hook',
      `busybox@sha256:${'a'.repeat(64)}`,
    ]
    assert.deepEqual(
      classifyLoadSources(refs, isFile),
      refs.map((reference) => ({ kind: 'image', reference }))
    )
  })

  it('refuses no argument, and an argument that is neither, naming it', () => {
    assert.throws(() => classifyLoadSources([], isFile), ImageLoadError)
    for (const bad of ['Hook:Dev', 'hook:', 'missing.tar ', 'a//b']) {
      assert.throws(
        () => classifyLoadSources([bad], isFile),
        (error: unknown) => error instanceof ImageLoadError && error.message.includes(bad)
      )
    }
  })

  it('refuses a directory given as an archive', () => {
    assert.throws(
      () => classifyLoadSources([tmpdir() + '/'], isRegularFile),
      /is not a file: give an image archive/
    )
  })
})

describe('image names of an archive', () => {
  it("gives short names Docker's full form and keeps names with a registry host", () => {
    assert.equal(normalizeImageName('hook:dev'), 'docker.io/library/hook:dev')
    assert.equal(normalizeImageName('team/hook:1'), 'docker.io/team/hook:1')
    assert.equal(normalizeImageName('ghcr.io/a/b:1'), 'ghcr.io/a/b:1')
    assert.equal(normalizeImageName('localhost:5000/b:1'), 'localhost:5000/b:1')
    assert.equal(normalizeImageName('localhost/b:1'), 'localhost/b:1')
  })

  it("reads a docker-archive's RepoTags, or else an OCI index's image names", () => {
    const manifest = JSON.stringify([
      { Config: 'c.json', RepoTags: ['hook:dev', 'ghcr.io/a/b:1'], Layers: [] },
      { Config: 'd.json', RepoTags: null, Layers: [] },
    ])
    assert.deepEqual(archiveImageNames(manifest), ['docker.io/library/hook:dev', 'ghcr.io/a/b:1'])
    const index = JSON.stringify({
      manifests: [
        { annotations: { 'io.containerd.image.name': 'web:1' } },
        { annotations: { 'org.opencontainers.image.ref.name': '1' } },
      ],
    })
    assert.deepEqual(archiveImageNames(undefined, index), ['docker.io/library/web:1'])
    assert.deepEqual(archiveImageNames(), [])
  })
})

describe('runningContainerd', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-load-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('says there is no real node when the directory has no real-node record', () => {
    assert.throws(
      () => runningContainerd(join(work, 'none')),
      (error: unknown) =>
        error instanceof ImageLoadError &&
        error.message.includes('no cluster with a real node') &&
        error.message.includes('metactl cluster up --runtime containerd')
    )
  })

  it('says the node is not running when its recorded containerd is gone', () => {
    const dir = join(work, 'stopped')
    mkdirSync(dir)
    const layout = realNodeLayout(dir)
    writeRealNodeState(layout.stateFile, {
      netns: 'net:[1]',
      mntns: 'mnt:[1]',
      cgroupRoot: layout.cgroupRoot,
      cgroupMounts: [],
      createdDirs: [],
      apiServerPort: 1,
      // A pid that cannot be running: above the kernel's pid_max.
      processes: [{ name: 'containerd', pid: 2 ** 22 + 1, command: '/nonexistent/containerd' }],
    })
    assert.throws(() => runningContainerd(dir), /is not running \(containerd stopped\)/)
  })

  it('reads a real-node record whatever else the directory holds', () => {
    const dir = join(work, 'other')
    mkdirSync(dir)
    writeFileSync(join(dir, 'control-plane.json'), '{"processes":[]}')
    assert.throws(() => runningContainerd(dir), /no cluster with a real node/)
  })
})
