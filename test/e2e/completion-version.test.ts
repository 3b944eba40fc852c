// `metactl completion` scripts load in a real bash and complete commands, flags and values;
// `metactl version` reports the package, Node and the server of $KUBECONFIG, or why not.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { metactl } from '../support/run-metactl.js'

const exec = promisify(execFile)
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }

/** Loads the bash script and asks it to complete each line (words split on spaces). */
async function complete(script: string, lines: readonly string[]): Promise<string[]> {
  const calls = lines
    .map((line) => {
      const words = line.split(' ').map((w) => `'${w}'`)
      return `COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _metactl; echo "\${COMPREPLY[*]}"`
    })
    .join('\n')
  const { stdout } = await exec('bash', ['--norc', '--noprofile', '-c', `${script}\n${calls}`])
  return stdout.trimEnd().split('\n')
}

describe('metactl completion', () => {
  it('prints a bash script that bash loads and that completes commands, flags and values', async () => {
    const { code, stdout } = await metactl(['completion', 'bash'])
    assert.equal(code, 0)
    const out = await complete(stdout, [
      'metactl ',
      'metactl cl',
      'metactl cluster ',
      'metactl cluster up --',
      'metactl render --output ',
      'metactl completion ',
      'metactl tree --name',
      'metactl sync --w',
    ])
    assert.deepEqual(out, [
      'run render cluster init dev ring sync tree rbac types version completion',
      'cluster',
      'install up status down load',
      '--cluster-dir --crd --port --nodes --runtime --feature-gates --audit-log --publish --image --real-nodes --help',
      'yaml json',
      'bash zsh fish',
      '--namespace',
      '--wait',
    ])
  })

  it('prints zsh and fish scripts naming every command', async () => {
    for (const shell of ['zsh', 'fish']) {
      const { code, stdout } = await metactl(['completion', shell])
      assert.equal(code, 0)
      for (const command of ['run', 'render', 'cluster', 'sync', 'tree', 'version', 'init', 'dev'])
        assert.match(stdout, new RegExp(`\\b${command}\\b`), `${shell} script names ${command}`)
    }
    // The zsh script is the bash one under bashcompinit: check it parses as bash does.
    const zsh = await metactl(['completion', 'zsh'])
    await exec('bash', ['-n', '-c', zsh.stdout.replace(/^autoload.*$/gm, '')])
  })

  it('refuses an unknown shell with the choices', async () => {
    const { code, stderr } = await metactl(['completion', 'tcsh'])
    assert.equal(code, 1)
    assert.match(stderr, /Allowed choices are bash, zsh, fish/)
  })
})

describe('metactl version', () => {
  it('reports the package, the engine, Node and the server of $KUBECONFIG', async () => {
    const { code, stdout } = await metactl(['version', '--output', 'json'])
    assert.equal(code, 0)
    const report = JSON.parse(stdout) as Record<string, unknown>
    assert.equal(report['metactl'], pkg.version)
    assert.equal(report['engine'], pkg.version)
    assert.equal(report['node'], process.version)
    if (process.env['KUBECONFIG'] !== undefined) {
      // The e2e tier always runs against a cluster; its server must answer.
      assert.match(String((report['server'] as { version?: string }).version), /^v1\.\d+\.\d+/)
    }
  })

  it('says why the server is unknown instead of failing', async () => {
    const { code, stdout } = await metactl(['version', '--kubeconfig', '/nonexistent/kubeconfig'])
    assert.equal(code, 0)
    assert.match(stdout, /^metactl: +\d+\.\d+\.\d+/m)
    assert.match(
      stdout,
      /^server: +unreachable: kubeconfig \/nonexistent\/kubeconfig: file not found/m
    )
  })

  it('--client does not contact the server', async () => {
    const { stdout } = await metactl(['version', '--client'])
    assert.doesNotMatch(stdout, /^server:/m)
  })
})
