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
if (process.argv[2] === 'run') {
  // Loading and starting allocate a burst that V8 answers by growing its young generation, which
  // it then keeps: 4 MiB of an idle engine's memory. `run` keeps it at its initial size until the
  // engine has started, then lets it grow again under load (see run.ts). It must be set before
  // the first module loads, hence here.
  const { setFlagsFromString } = await import('node:v8')
  setFlagsFromString('--semi-space-growth-factor=1')
}
const { main: run } = await import(main.href)
process.exitCode = await run(process.argv)
