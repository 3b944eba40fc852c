import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { buildImageArgs, ImageBuildError, imagesScript, runImagesScript } from './image-builder.js'

describe('image builder', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-images-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('ships the scripts it runs', () => {
    for (const name of ['build.sh', 'buildah.sh', 'base-images.sh'] as const) {
      assert.ok(existsSync(imagesScript(name)), imagesScript(name))
    }
  })

  it('passes tag, output, Dockerfile and build arguments to build.sh, context last', () => {
    assert.deepEqual(
      buildImageArgs({
        context: '/p',
        tag: 'hook:dev',
        output: '/o/hook.tar',
        dockerfile: '/p/Dockerfile.alt',
        buildArgs: { NODE_IMAGE: 'node:24-bookworm-slim', VERSION: '1 2' },
      }),
      [
        '-t',
        'hook:dev',
        '-o',
        '/o/hook.tar',
        '-f',
        '/p/Dockerfile.alt',
        '--build-arg',
        'NODE_IMAGE=node:24-bookworm-slim',
        '--build-arg',
        'VERSION=1 2',
        '/p',
      ]
    )
    assert.deepEqual(buildImageArgs({ context: '.', tag: 't', output: 'o' }), [
      '-t',
      't',
      '-o',
      'o',
      '.',
    ])
  })

  it('refuses a build argument name the Dockerfile could not declare', () => {
    assert.throws(
      () => buildImageArgs({ context: '.', tag: 't', output: 'o', buildArgs: { 'A=B': 'x' } }),
      /bad build argument name "A=B"/
    )
  })

  it('resolves with the last stdout line and streams stderr lines as progress', async () => {
    const script = join(work, 'ok.sh')
    writeFileSync(
      script,
      'echo "step 1" >&2\necho "step 2" >&2\necho ignored\necho "/out/$1.tar"\n'
    )
    const lines: string[] = []
    assert.equal(await runImagesScript(script, ['x'], (l) => lines.push(l)), '/out/x.tar')
    assert.deepEqual(lines, ['step 1', 'step 2'])
  })

  it('rejects with the exit status and the last lines when the script fails', async () => {
    const script = join(work, 'fail.sh')
    writeFileSync(script, 'echo "no Dockerfile at x" >&2\nexit 2\n')
    await assert.rejects(
      runImagesScript(script, []),
      (error: unknown) =>
        error instanceof ImageBuildError &&
        error.message.includes('exit 2') &&
        error.message.includes('no Dockerfile at x')
    )
  })
})
