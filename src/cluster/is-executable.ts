import { accessSync, constants } from 'node:fs'

/** Whether `path` exists and this process may execute it (a built binary, a build script). */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}
