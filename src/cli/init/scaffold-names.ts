/**
 * The names a scaffolded project is built from, checked the way the API server would check them.
 *
 * @module
 */
import { CliError } from '../cli-error.js'
import { pluralOf } from '../../api/resource-names.js'

/** Names used throughout a scaffolded project. */
export interface ScaffoldNames {
  /** Package and controller name: a DNS-1123 label (`my-controller`). */
  readonly name: string
  readonly kind: string
  readonly plural: string
  readonly group: string
  readonly version: string
}

/** Checks and completes the names; `name` comes from the directory unless given. */
export function scaffoldNames(options: {
  readonly name: string
  readonly kind: string
  readonly group: string
  readonly version: string
}): ScaffoldNames {
  const { name, kind, group, version } = options
  if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) {
    throw new CliError(
      `"${name}" cannot name the project: use lowercase letters, digits and "-", starting with a ` +
        'letter (it names the npm package and the CompositeController); pass --name'
    )
  }
  if (!/^[A-Z][A-Za-z0-9]{0,62}$/.test(kind)) {
    throw new CliError(
      `--kind "${kind}" must be UpperCamelCase letters and digits, such as Greeting`
    )
  }
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(group)) {
    throw new CliError(`--group "${group}" must be a DNS subdomain with a dot, such as example.com`)
  }
  if (!/^v\d+((alpha|beta)\d+)?$/.test(version)) {
    throw new CliError(`--api-version "${version}" must look like v1, v1beta1 or v2alpha1`)
  }
  return { name, kind, plural: pluralOf(kind), group, version }
}
