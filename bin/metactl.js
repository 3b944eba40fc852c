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
  // A small steady heap for the engine, chosen by measurement at 1,000 parents (docs/performance.md,
  // "V8 settings of metactl run").
  // - The young generation stays at its initial size (growth factor 1): V8 would otherwise answer
  //   the allocation bursts of start-up and load by doubling its semi-spaces up to 16 MiB each and
  //   keep them.
  // - --optimize-for-size: V8 favours memory over speed, notably a smaller growth of the old
  //   generation before its next full collection.
  // - --no-opt: no TurboFan. Its optimized code, the compiler's own memory on its background
  //   thread and the pages of the compiler in the node binary cost about 7 MiB at 1,000 parents;
  //   the engine's time goes to I/O and JSON (native code), so its CPU stayed within the noise.
  // They must be set before the first module loads, hence here, where no NODE_OPTIONS is needed.
  // An operator who names one of them (or its opposite) on the node command line, or a semi-space
  // flag in NODE_OPTIONS (which refuses the others), keeps their own choice.
  const given = `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`
  const { setFlagsFromString } = await import('node:v8')
  if (!/semi-space|young/.test(given)) setFlagsFromString('--semi-space-growth-factor=1')
  if (!/optimize-for-size/.test(given)) setFlagsFromString('--optimize-for-size')
  if (!/--(no-)?(opt|turbofan|max-opt)\b/.test(given)) setFlagsFromString('--no-opt')
}
const { main: run } = await import(main.href)
process.exitCode = await run(process.argv)
