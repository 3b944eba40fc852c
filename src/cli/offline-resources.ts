/**
 * Resource names without discovery, for `metactl render` and `metactl init`; they live in the api
 * layer (`src/api/resource-names.ts`), shared with the SDK's test helpers.
 *
 * @module
 */
export { isClusterScoped, isResourceOf, kindOf, pluralOf } from '../api/resource-names.js'
