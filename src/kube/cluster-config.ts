/**
 * Describes how to reach one Kubernetes API server: where it is, how to trust it and who we are.
 *
 * @remarks
 * This is data only: it is produced by the kubeconfig and in-cluster loaders (or built directly by
 * the test harness) and consumed by the HTTP transport. Credentials that change over time (a
 * rotated service-account token, an exec plugin) are described here and resolved by the transport
 * through a {@link CredentialSource}, so nothing here is ever stale.
 */
export interface ClusterConfig {
  /** Base URL of the API server, e.g. `https://127.0.0.1:6443`, without a trailing slash. */
  readonly server: string
  /** PEM bundle of the certificate authorities to trust; the system roots are used when absent. */
  readonly caPem?: string
  /** Skips verification of the server certificate (kubeconfig `insecure-skip-tls-verify`). */
  readonly insecureSkipTlsVerify?: boolean
  /** Name to verify the server certificate against instead of the URL's host (`tls-server-name`). */
  readonly tlsServerName?: string
  /**
   * Proxy every request goes through (kubeconfig `proxy-url`, `http://` or `https://`); when
   * absent, the `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` environment decides, as in client-go.
   */
  readonly proxyUrl?: string
  /** PEM client certificate for mutual TLS. */
  readonly clientCertPem?: string
  /** PEM private key of {@link ClusterConfig.clientCertPem}. */
  readonly clientKeyPem?: string
  /** How to obtain the bearer credential for each request. */
  readonly auth: AuthConfig
  /** Default namespace of the selected context (`default` when the source gives none). */
  readonly namespace: string
  /** Where this configuration came from, for error messages (a file and context, or `in-cluster`). */
  readonly source: string
}

/** Selects how requests are authenticated beyond the TLS client certificate. */
export type AuthConfig =
  | { readonly type: 'none' }
  | { readonly type: 'token'; readonly token: string }
  | {
      /** A token file re-read as it changes, as a projected service-account token rotates. */
      readonly type: 'tokenFile'
      readonly path: string
    }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'exec'; readonly exec: ExecConfig }

/** An exec credential plugin from a kubeconfig user (`client.authentication.k8s.io` v1 or v1beta1). */
export interface ExecConfig {
  readonly apiVersion: string
  readonly command: string
  readonly args: readonly string[]
  readonly env: readonly { readonly name: string; readonly value: string }[]
  /** `Never`, `IfAvailable` or `Always`; we never have a TTY to offer, so this only shapes errors. */
  readonly interactiveMode?: string
  /** Passes the cluster block to the plugin in `KUBERNETES_EXEC_INFO`. */
  readonly provideClusterInfo: boolean
  /** Help text the kubeconfig author supplied for when the command is missing. */
  readonly installHint?: string
}

/**
 * Supplies the current request credential and can be told that the server rejected it.
 *
 * @remarks
 * Implementations cache: a static token never changes, a token file is re-read at most once a
 * minute, an exec plugin runs again only when its credential expires or a 401 arrives.
 */
export interface CredentialSource {
  /** Returns the credential to use for the next request. */
  current(signal?: AbortSignal): Promise<RequestCredential>
  /** Drops any cached credential after the server answered 401, so the next call refreshes it. */
  invalidate(): void
}

/** Credential material for one request: an Authorization header and/or a client certificate. */
export interface RequestCredential {
  /** Full `Authorization` header value (`Bearer …` or `Basic …`), when there is one. */
  readonly authorization?: string
  /** Client certificate and key supplied by an exec plugin, overriding the configured pair. */
  readonly clientCertPem?: string
  readonly clientKeyPem?: string
}
