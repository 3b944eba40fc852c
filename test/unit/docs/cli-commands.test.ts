// The CLI-table check of the docs test: the commands metactl registers, and the ones a table lists.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  missingCommands,
  registeredCommands,
  tableCommands,
} from '../../support/docs/cli-commands.js'

const TABLE = `| command | what |
|---|---|
| \`metactl init [dir]\` | scaffold |
| \`metactl cluster install\\|up\\|status\\|down\` | the local control plane |
| \`metactl tree KIND/NAME\` | an object and what it owns |
not a row: \`metactl ring\``

describe('CLI table check', () => {
  it('reads the commands the CLI registers, nested ones included, from the program itself', async () => {
    const commands = (await registeredCommands()).map((words) => words.join(' '))
    for (const command of ['run', 'ring', 'cluster', 'cluster up', 'cluster down', 'completion'])
      assert.ok(commands.includes(command), command)
    assert.ok(!commands.includes('help'))
  })

  it("reads a table row's command words and alternatives, arguments left out", () => {
    assert.deepEqual(tableCommands(TABLE), [
      ['init'],
      ['cluster'],
      ['cluster', 'install'],
      ['cluster', 'up'],
      ['cluster', 'status'],
      ['cluster', 'down'],
      ['tree'],
    ])
  })

  it('names each registered command the table lacks', () => {
    const registered = [['init'], ['ring'], ['cluster'], ['cluster', 'up'], ['cluster', 'reset']]
    assert.deepEqual(missingCommands(registered, tableCommands(TABLE)), [
      'metactl ring',
      'metactl cluster reset',
    ])
  })
})
