// The path check of the docs test: which code spans are paths, and where they may resolve.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  missingPaths,
  pathOf,
  subjectFolders,
  withFolders,
} from '../../support/docs/repository-paths.js'

const TREE = withFolders([
  'src/engine/sync/run-sync.ts',
  'src/engine/children/claim-children.ts',
  'src/engine/children/dynamic-apply.test.ts',
  'src/api/desired-children.ts',
  'test/integration/crds.test.ts',
  'tools/kwok/build.sh',
  'tools/traefik/build.sh',
  'deploy/crds/kustomization.yaml',
])

function check(file: string, text: string): string[] {
  return missingPaths(file, text, { tree: TREE, bases: subjectFolders(file, text, TREE) })
}

describe('pathOf', () => {
  it('reads file names and slashed words as paths, a line or anchor suffix dropped', () => {
    assert.equal(pathOf('src/api/desired-children.ts:31'), 'src/api/desired-children.ts')
    assert.equal(pathOf('deploy.md#flags'), 'deploy.md')
    assert.equal(pathOf('tools/…/build.sh'), 'tools/*/build.sh')
    assert.equal(pathOf('crds.test.ts'), 'crds.test.ts')
  })

  it('leaves commands, flags, URLs, home paths, selectors and words alone', () => {
    for (const code of [
      'kubectl apply -k deploy/crds',
      '--target-label-selector',
      'https://127.0.0.1:6443',
      '~/.cache/metacontroller-ts/',
      '/usr/bin/metacontroller',
      'app=web,role=settings',
      'install|up|status|down',
      '@datadog/pprof',
      'Recreate',
    ])
      assert.equal(pathOf(code), undefined, code)
  })
})

describe('missingPaths', () => {
  it('flags a path that moved, and accepts it where it lives now', () => {
    assert.deepEqual(check('docs/compat.md', 'proven by `src/engine/dynamic-apply.test.ts`'), [
      'docs/compat.md:1 `src/engine/dynamic-apply.test.ts` does not exist',
    ])
    assert.deepEqual(check('docs/compat.md', '`src/engine/children/dynamic-apply.test.ts`'), [])
  })

  it('resolves from the root, from src/ and from the folders of the full paths the doc names', () => {
    const text = [
      '`src/engine/sync/run-sync.ts` runs `children/claim-children.ts`,',
      'the checks are `api/desired-children.ts`; `int:` tests such as `crds.test.ts`',
      'live next to `test/integration/crds.test.ts`.',
    ].join('\n')
    assert.deepEqual(check('docs/ARCHITECTURE.md', text), [])
    assert.deepEqual(check('docs/x.md', 'the step `children/claim-children.ts`'), [
      'docs/x.md:1 `children/claim-children.ts` does not exist',
    ])
  })

  it('accepts globs and an ellipsis, and flags a glob that matches nothing', () => {
    assert.deepEqual(
      check('README.md', '`tools/*/build.sh`, `tools/…/build.sh`, `deploy/crds/`'),
      []
    )
    assert.deepEqual(check('README.md', '`tools/*/install.sh`'), [
      'README.md:1 `tools/*/install.sh` does not exist',
    ])
  })

  it('flags a missing file name but takes slashed words outside the tree for what they are', () => {
    assert.deepEqual(
      check('README.md', '`apps/v1`, `greeting/hello`, `metacontroller-ts/engine`'),
      []
    )
    assert.deepEqual(check('README.md', '`src/gone/`, `gone.ts`'), [
      'README.md:1 `src/gone/` does not exist',
      'README.md:1 `gone.ts` does not exist',
    ])
  })

  it('skips fenced code and accepts paths of another tree the doc describes', () => {
    const text = '```sh\ncat src/nowhere.ts\n```\nedit `src/hook.ts`'
    const project = withFolders(['src/hook.ts'])
    const bases = subjectFolders('README.md', text, TREE)
    assert.deepEqual(missingPaths('README.md', text, { tree: TREE, bases, others: [project] }), [])
    assert.deepEqual(missingPaths('README.md', text, { tree: TREE, bases }), [
      'README.md:4 `src/hook.ts` does not exist',
    ])
  })
})
