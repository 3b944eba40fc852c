#!/usr/bin/env node
// Entry point of the published CLI; the compiled code lives in dist/.
import { main } from '../dist/cli/main.js'

process.exitCode = await main(process.argv)
