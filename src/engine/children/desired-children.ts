/**
 * The engine's checks and defaulting of desired children. They live in the api layer
 * (`src/api/desired-children.ts`), so that the SDK's test helpers run the very same checks; the
 * engine imports them from here.
 *
 * @module
 */
export { InvalidDesiredChildError, prepareDesiredChildren } from '../../api/desired-children.js'
export type {
  DesiredChildren,
  DesiredChildrenContext,
  DesiredChildrenRules,
} from '../../api/desired-children.js'
