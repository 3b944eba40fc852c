#!/usr/bin/env node
// Entry point of the published CLI; the compiled code lives in dist/, which `npm ci` (the
// `prepare` script) and `npm pack` build. A checkout installed with --ignore-scripts has none,
// so say how to get it instead of printing a module-resolution stack.
import { existsSync } from 'node:fs'

const main = new URL('../dist/cli/main.js', import.meta.url)
if (!existsSync(main)) {
  process.stderr.write(
    'metactl: dist/ is missing (the package was installed without running its build).\n' +
      '  Build it: npm run build   (in the metacontroller-ts checkout)\n'
  )
  process.exit(1)
}
const { main: run } = await import(main.href)
process.exitCode = await run(process.argv)
