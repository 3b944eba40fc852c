import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'

import { TokenFileCredentials } from './token-file-credentials.js'

const dir = mkdtempSync(join(tmpdir(), 'token-file-credentials-'))
after(() => {
  rmSync(dir, { recursive: true, force: true })
})
let caseCount = 0

function tokenFile(content: string): string {
  const file = join(dir, `token-${++caseCount}`)
  writeFileSync(file, content)
  return file
}

describe('TokenFileCredentials', () => {
  it('re-reads a rotated token file after 60 s', async () => {
    const file = tokenFile('first\n')
    let now = 1_000_000
    const source = new TokenFileCredentials(file, { now: () => now })
    assert.deepEqual(await source.current(), { authorization: 'Bearer first' })
    writeFileSync(file, 'second\n')
    now += 59_999
    assert.deepEqual(await source.current(), { authorization: 'Bearer first' })
    now += 1
    assert.deepEqual(await source.current(), { authorization: 'Bearer second' })
  })

  it('re-reads the token file after invalidate', async () => {
    const file = tokenFile('first')
    const source = new TokenFileCredentials(file, { now: () => 0 })
    await source.current()
    writeFileSync(file, 'second')
    source.invalidate()
    assert.deepEqual(await source.current(), { authorization: 'Bearer second' })
  })

  it('reads the file once for concurrent callers', async () => {
    let reads = 0
    const source = new TokenFileCredentials('/virtual/token', {
      readFile: async () => {
        reads++
        await new Promise((resolve) => setTimeout(resolve, 20))
        return 'tok'
      },
    })
    await Promise.all([source.current(), source.current(), source.current()])
    assert.equal(reads, 1)
  })

  it('keeps the previous token when a timed re-read fails', async () => {
    const file = tokenFile('first')
    let now = 0
    const source = new TokenFileCredentials(file, { now: () => now })
    await source.current()
    unlinkSync(file)
    now += 120_000
    assert.deepEqual(await source.current(), { authorization: 'Bearer first' })
  })

  it('names the token file when it cannot be read', async () => {
    const file = join(dir, 'missing-token')
    const source = new TokenFileCredentials(file)
    await assert.rejects(source.current(), {
      message: new RegExp(`^cannot read bearer token file ${file}: ENOENT`),
    })
    const empty = new TokenFileCredentials(tokenFile('  \n'))
    await assert.rejects(empty.current(), { message: /: the file is empty$/ })
  })
})
