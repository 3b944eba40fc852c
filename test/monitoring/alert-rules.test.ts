// The engine's alert rules (deploy/helm/metacontroller-ts/monitoring/metacontroller-ts-rules.yaml)
// pass `promtool check rules`, and `promtool test rules` with test/monitoring/
// metacontroller-ts-rules.test.yaml: each alert fires on the series made for it, with its labels
// and annotations, while every other alert, and all of them on a healthy engine whose series sit
// at their thresholds, stay silent. A rule file with one threshold moved fails those tests, so
// they can fail. promtool comes from tools/promtool/build.sh; `make monitoring` builds it and
// runs this file (outside `make test`: a cold build takes over 3 minutes).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'

const RULES = 'deploy/helm/metacontroller-ts/monitoring/metacontroller-ts-rules.yaml'
const TESTS = 'test/monitoring/metacontroller-ts-rules.test.yaml'

interface Run {
  readonly code: number
  readonly stdout: string
  /** stdout and stderr together, for messages. */
  readonly output: string
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
      resolve({ code, stdout, output: stdout + stderr })
    })
  })
}

/** The alert names the rule file defines. */
function alertNames(text: string): string[] {
  return [...text.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1] ?? '')
}

describe('the alert rules under promtool', () => {
  let promtool = ''
  let work = ''

  before(async () => {
    const built = await run('tools/promtool/build.sh', [])
    assert.equal(built.code, 0, built.output)
    promtool = built.stdout.trim().split('\n').at(-1) ?? ''
    work = mkdtempSync(join(tmpdir(), 'alert-rules-'))
  })

  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('passes promtool check rules', async () => {
    const checked = await run(promtool, ['check', 'rules', RULES])
    assert.equal(checked.code, 0, checked.output)
    const count = alertNames(readFileSync(RULES, 'utf8')).length
    assert.match(checked.output, new RegExp(`SUCCESS: ${String(count)} rules found`))
  })

  it('makes each alert fire on its series and keeps the others silent', async () => {
    const tests = readFileSync(TESTS, 'utf8')
    // Every alert has a group where it is expected to fire.
    for (const alert of alertNames(readFileSync(RULES, 'utf8'))) {
      assert.match(tests, new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`))
    }
    const tested = await run(promtool, ['test', 'rules', TESTS])
    assert.equal(tested.code, 0, tested.output)
    assert.match(tested.output, /SUCCESS/)
  })

  it('fails the tests once a threshold moves under the healthy series', async () => {
    // The same tests against a copy of the rules whose in-flight threshold is 4, the healthy
    // engine's value: that alert now fires where the tests expect silence.
    // The copies keep the repository's layout: the tests name the rules by a relative path.
    mkdirSync(join(work, 'deploy/helm/metacontroller-ts/monitoring'), { recursive: true })
    mkdirSync(join(work, 'test/monitoring'), { recursive: true })
    const rules = readFileSync(RULES, 'utf8')
    const moved = rules.replace(
      '(metacontroller_sync_in_flight_requests) >= 5',
      '(metacontroller_sync_in_flight_requests) >= 4'
    )
    assert.notEqual(moved, rules)
    writeFileSync(join(work, RULES), moved)
    copyFileSync(TESTS, join(work, TESTS))
    const tested = await run(promtool, ['test', 'rules', join(work, TESTS)])
    assert.notEqual(tested.code, 0, tested.output)
    assert.match(tested.output, /alertname: MetacontrollerHookInFlight/)
  })
})
