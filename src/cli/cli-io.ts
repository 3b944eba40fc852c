/** Where the CLI writes: results to `out` (stdout), progress and errors to `err` (stderr). */
export interface CliIo {
  out(line: string): void
  err(line: string): void
}

/** Writes to the process's stdout and stderr. */
export const processIo: CliIo = {
  out: (line) => {
    process.stdout.write(`${line}\n`)
  },
  err: (line) => {
    process.stderr.write(`${line}\n`)
  },
}
