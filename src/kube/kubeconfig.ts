/**
 * The kubeconfig model: named clusters, users and contexts as parsed from one file or merged from
 * several, with file references already made absolute.
 *
 * @module
 */

/** A kubeconfig `clusters[].cluster` entry, with file references already made absolute. */
export interface KubeconfigCluster {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly server?: string | undefined
  readonly certificateAuthority?: string | undefined
  /** Base64 of a PEM bundle, as written in the file. */
  readonly certificateAuthorityData?: string | undefined
  readonly insecureSkipTlsVerify?: boolean | undefined
  readonly tlsServerName?: string | undefined
  /** `proxy-url`: the proxy every request to this cluster goes through. */
  readonly proxyUrl?: string | undefined
}

/** A kubeconfig `users[].user.exec` block, not yet validated (only the selected user is). */
export interface KubeconfigExec {
  readonly apiVersion?: string | undefined
  readonly command?: string | undefined
  readonly args: readonly string[]
  readonly env: readonly { readonly name: string; readonly value: string }[]
  readonly provideClusterInfo: boolean
  readonly interactiveMode?: string | undefined
  readonly installHint?: string | undefined
}

/** A kubeconfig `users[].user` entry, with file references already made absolute. */
export interface KubeconfigUser {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly clientCertificate?: string | undefined
  /** Base64 of a PEM certificate, as written in the file. */
  readonly clientCertificateData?: string | undefined
  readonly clientKey?: string | undefined
  /** Base64 of a PEM private key, as written in the file. */
  readonly clientKeyData?: string | undefined
  readonly token?: string | undefined
  readonly tokenFile?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | undefined
  readonly exec?: KubeconfigExec | undefined
  /** Name of a legacy `auth-provider`, kept only to reject it with a clear message. */
  readonly authProvider?: string | undefined
}

/** A kubeconfig `contexts[].context` entry. */
export interface KubeconfigContext {
  /** The kubeconfig file that defined this entry, for error messages. */
  readonly file: string
  readonly cluster?: string | undefined
  readonly user?: string | undefined
  readonly namespace?: string | undefined
}

/** One kubeconfig file, or several merged, as named maps of clusters, users and contexts. */
export interface Kubeconfig {
  /** The files this configuration was read from, in precedence order. */
  readonly files: readonly string[]
  readonly currentContext?: string | undefined
  readonly clusters: ReadonlyMap<string, KubeconfigCluster>
  readonly users: ReadonlyMap<string, KubeconfigUser>
  readonly contexts: ReadonlyMap<string, KubeconfigContext>
}
