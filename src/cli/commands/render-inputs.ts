/**
 * The inputs of `metactl render`: the manifests its flags name, and the resources their rules
 * stand for, without discovery.
 *
 * @remarks
 * An object belongs to the rule with its apiVersion whose resource is the lowercase plural of its
 * kind. A rule no observed object names gets a well-known kind, or one guessed from its resource
 * and corrected from the hook's answer (see `api/resource-names.ts` for plurals and scopes).
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { controllerRefOf, groupOf } from '../../core/owner-references.js'
import { isResourceOf } from '../../api/resource-names.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { parentSchemaOf } from '../../sdk/parent-schema-check.js'
import { validateAgainstSchema } from '../../sdk/schema-validation.js'
import { messageOf } from '../../core/message-of.js'
import { describeObject } from '../../offline/offline-resource.js'
import type { OfflineInputs, ResolvedRule, RuleField } from '../../offline/offline-resource.js'
import { resolveRules } from '../../offline/resolve-rules.js'
import { CliError } from '../cli-error.js'

/** The UID `metactl render` gives a parent that has none and whose children name none. */
export const RENDER_PARENT_UID = '00000000-0000-0000-0000-render0000000'

/** The options of `metactl render`. */
export interface RenderOptions {
  controller: string
  parent: string
  observed?: string[]
  related?: string[]
  crd?: string[]
  hookUrl?: string
  hookModule?: string
  output: 'yaml' | 'json'
  finalizing?: boolean
  diff?: boolean
}

/** A `List` (`kubectl get -o yaml`) stands for its items. */
function withoutLists(objects: readonly KubeObject[], origin: string): KubeObject[] {
  return objects.flatMap((object) => {
    if (!object.kind.endsWith('List') || !Array.isArray(object['items'])) return [object]
    const items: unknown[] = object['items']
    return items.map((item, index) => {
      if (
        !isJsonObject(item) ||
        typeof item['kind'] !== 'string' ||
        !isJsonObject(item['metadata'])
      )
        throw new CliError(
          `${origin}: item ${index} of the ${object.kind} is not a Kubernetes object`
        )
      // `kubectl get -o yaml` leaves out the kind's apiVersion only on the list itself.
      return item as KubeObject
    })
  })
}

/** Reads the objects of a manifest file named by a flag; errors name the flag and file. */
export function readObjects(flag: string, path: string): KubeObject[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new CliError(`${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : messageOf(error)}`)
  }
  try {
    return withoutLists(parseManifests(text, `${flag} ${path}`), `${flag} ${path}`)
  } catch (error) {
    throw new CliError(messageOf(error))
  }
}

/**
 * The UID a parent without one gets: that of the controller reference its observed children
 * carry for it (same group, kind and name), so that they are claimed as in the cluster they came
 * from; else {@link RENDER_PARENT_UID}, so that generated selectors, and the output, are stable.
 */
function parentUid(parent: KubeObject, observed: readonly KubeObject[]): string {
  for (const child of observed) {
    const ref = controllerRefOf(child)
    if (
      ref?.kind === parent.kind &&
      ref.name === parent.metadata.name &&
      groupOf(ref.apiVersion) === groupOf(parent.apiVersion)
    )
      return ref.uid
  }
  return RENDER_PARENT_UID
}

/**
 * Reads the one object a `--parent` file holds and checks it is of one of the rules' resources;
 * a parent without a UID gets one (see {@link parentUid}).
 */
function readParentObject(
  path: string,
  rules: readonly { readonly apiVersion: string; readonly resource: string }[],
  observed: readonly KubeObject[],
  warn: (line: string) => void
): KubeObject {
  const objects = readObjects('--parent', path)
  const [first] = objects
  if (first === undefined || objects.length > 1) {
    throw new CliError(`--parent ${path}: expected one object, found ${objects.length}`)
  }
  const parent = structuredClone(first)
  if ((parent.metadata.name ?? '') === '')
    throw new CliError(`--parent ${path}: the ${parent.kind} has no metadata.name`)
  const sameVersion = rules.filter((rule) => rule.apiVersion === parent.apiVersion)
  if (sameVersion.length === 0) {
    const named = rules.map((rule) => `${rule.apiVersion} ${rule.resource}`).join(', ')
    const what =
      rules.length === 1 ? "the controller's parent resource" : "one of the controller's resources"
    throw new CliError(`--parent ${path}: ${describeObject(parent)} is not ${what} (${named})`)
  }
  if (!sameVersion.some((rule) => isResourceOf(parent.kind, rule.resource))) {
    const resources = sameVersion.map((rule) => rule.resource).join(', ')
    warn(
      `warning: the parent's kind ${parent.kind} does not look like resource ${resources}; ` +
        'rendering anyway'
    )
  }
  if (parent.metadata.uid === undefined || parent.metadata.uid === '') {
    parent.metadata.uid = parentUid(parent, observed)
  }
  return parent
}

/**
 * Checks the parent against its CRD's schema, when one is given, as the API server would on
 * create; a violation is an error worded as the API server's (`Kind.group "name" is invalid:
 * field: reason`).
 */
function checkParentSchema(parent: KubeObject, crds: readonly KubeObject[]): void {
  let violations
  try {
    // CRDs given only for children leave the parent unchecked.
    const schema = parentSchemaOf(parent, crds)
    if (schema === undefined) return
    violations = validateAgainstSchema(parent, schema)
  } catch (error) {
    throw new CliError(`--crd: ${messageOf(error)}`)
  }
  if (violations.length === 0) return
  const causes = violations.map((v) => `${v.path}: ${v.message}`)
  const list = causes.length === 1 ? (causes[0] ?? '') : `[${causes.join(', ')}]`
  throw new CliError(
    `--parent: ${parent.kind}.${groupOf(parent.apiVersion)} "${parent.metadata.name ?? ''}" is invalid: ${list}`
  )
}

/**
 * Reads the `--parent`, `--crd` and `--observed` files: the parent checked against its CRD, the
 * rules resolved and the observed objects sorted into them, except those `hold` keeps apart.
 */
export function readInputs(
  opts: RenderOptions,
  parentRules: readonly { readonly apiVersion: string; readonly resource: string }[],
  declared: readonly ResolvedRule['rule'][],
  field: RuleField,
  warn: (line: string) => void,
  hold: (object: KubeObject) => boolean = () => false
): OfflineInputs {
  const files = (opts.observed ?? []).flatMap((file) =>
    readObjects('--observed', file).map((object) => ({ object, file }))
  )
  const objects = files.map((f) => f.object)
  const parent = readParentObject(opts.parent, parentRules, objects, warn)
  const crds = (opts.crd ?? []).flatMap((path) =>
    readObjects('--crd', path).filter((o) => o.kind === 'CustomResourceDefinition')
  )
  checkParentSchema(parent, crds)
  const observed = files.filter((f) => !hold(f.object))
  const resolved = resolveRules(declared, field, parent, observed, crds)
  const related = (opts.related ?? []).flatMap((file) => readObjects('--related', file))
  return { parent, crds, ...resolved, held: objects.filter(hold), related }
}
