/**
 * References to the built-in resources this project reads and writes by name, so that each is
 * spelled once.
 *
 * @module
 */
import type { ResourceRef } from './dynamic-client.js'

/** `v1 namespaces` (cluster-scoped). */
export const NAMESPACES: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  namespaced: false,
}
/** `v1 configmaps`. */
export const CONFIGMAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}
/** `v1 secrets`. */
export const SECRETS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  namespaced: true,
}
/** `v1 pods`. */
export const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }
/** `v1 services`. */
export const SERVICES: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'services',
  namespaced: true,
}
/** `v1 events` (core events, as client-go's recorder writes them). */
export const EVENTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'events',
  namespaced: true,
}
/** `networking.k8s.io/v1 ingresses`. */
export const INGRESSES: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingresses',
  namespaced: true,
}
/** `metacontroller.k8s.io/v1alpha1 compositecontrollers` (cluster-scoped). */
export const COMPOSITE_CONTROLLERS: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'compositecontrollers',
  namespaced: false,
}

/** `metacontroller.k8s.io/v1alpha1 decoratorcontrollers` (cluster-scoped). */
export const DECORATOR_CONTROLLERS: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'decoratorcontrollers',
  namespaced: false,
}

/** `metacontroller.k8s.io/v1alpha1 controllerrevisions` (namespaced; rolling-update history). */
export const CONTROLLER_REVISIONS: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'controllerrevisions',
  namespaced: true,
}
