/**
 * The Kubernetes client: kubeconfig loading, a pooled HTTPS transport with typed errors,
 * discovery, and a dynamic client for any resource.
 *
 * @example
 * ```ts
 * import { DynamicClient, KubeTransport, loadClusterConfig } from 'metacontroller-ts/kube'
 *
 * const transport = new KubeTransport(await loadClusterConfig())
 * const client = new DynamicClient(transport)
 * const pods = await client.list({ group: '', version: 'v1', resource: 'pods', namespaced: true })
 * ```
 *
 * @module
 */
export type { AuthConfig, ClusterConfig, CredentialSource, ExecConfig } from './cluster-config.js'
export { loadClusterConfig } from './load-cluster-config.js'
export type { LoadClusterConfigOptions } from './load-cluster-config.js'
export { KubeconfigError } from './kubeconfig-error.js'
export { ConnectionError } from './connection-error.js'
export { createCredentialSource } from './credential-source.js'
export { KubeTransport } from './kube-transport.js'
export type {
  KubeRequest,
  KubeTransportOptions,
  RequestLimiter,
  RequestObserver,
} from './kube-transport.js'
export {
  ProxyConfigError,
  environmentProxyResolver,
  fixedProxyResolver,
  proxyEnvironmentFrom,
} from './proxy/proxy-resolver.js'
export type { ProxyEnvironment, ProxyResolver } from './proxy/proxy-resolver.js'
export { DynamicClient, formatResourceRef, resourcePath } from './dynamic-client.js'
export type {
  DeleteOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  ResourceRef,
  WatchOptions,
} from './dynamic-client.js'
export { Discovery } from './discovery.js'
export { ResourceMap } from './resource-map.js'
export type { ResourceInfo } from './resource-map.js'
export { UnknownResourceError } from './unknown-resource-error.js'
export {
  AlreadyExistsError,
  ApiError,
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidError,
  NotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
} from './api-error.js'
export { readWatchEvents } from './watch-event.js'
export type { WatchEvent, WatchEventType } from './watch-event.js'
export {
  COMPOSITE_CONTROLLERS,
  CONFIGMAPS,
  DECORATOR_CONTROLLERS,
  EVENTS,
  INGRESSES,
  NAMESPACES,
  PODS,
  SERVICES,
} from './well-known-resources.js'
