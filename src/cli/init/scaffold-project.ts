/**
 * The project files of a scaffolded controller: package.json, tsconfig, Dockerfile, ignore
 * files and README.
 *
 * @module
 */
import type { ScaffoldNames } from './scaffold-names.js'

/** Versions the scaffold pins: the ones this package builds and tests with. */
export interface ScaffoldVersions {
  /** npm spec of metacontroller-ts (`file:vendor/metacontroller-ts-0.1.0.tgz`, `^0.1.0`). */
  readonly metacontrollerTs: string
  readonly typescript: string
  readonly tsx: string
  readonly typesNode: string
  readonly yaml: string
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/** `package.json`. */
export function packageJson(n: ScaffoldNames, v: ScaffoldVersions): string {
  return json({
    name: n.name,
    version: '0.1.0',
    private: true,
    description: `A Kubernetes controller for ${n.kind} objects, written with metacontroller-ts`,
    type: 'module',
    engines: { node: '>=20.19' },
    scripts: {
      build: 'tsc -p tsconfig.build.json',
      typecheck: 'tsc --noEmit',
      test: 'tsc --noEmit && node --import tsx --test test/*.test.ts',
      dev: 'metactl dev',
      types: 'metactl types deploy/crd.yaml -o src/types.ts',
      start: 'node dist/server.js',
    },
    dependencies: { 'metacontroller-ts': v.metacontrollerTs, yaml: v.yaml },
    devDependencies: { '@types/node': v.typesNode, tsx: v.tsx, typescript: v.typescript },
  })
}

/** `tsconfig.json` (type-checks sources and tests) and `tsconfig.build.json` (emits `dist/`). */
export function tsconfigFiles(): Record<string, string> {
  return {
    'tsconfig.json': json({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        verbatimModuleSyntax: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        skipLibCheck: true,
        outDir: 'dist',
      },
      include: ['src', 'test'],
    }),
    'tsconfig.build.json': json({
      extends: './tsconfig.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist' },
      include: ['src'],
    }),
  }
}

/** The Dockerfile of the hook image and its ignore file. */
export function dockerFiles(): Record<string, string> {
  return {
    Dockerfile: `# The hook as a container image: docker build -t <name>-hook:dev .
# Two stages: the build compiles TypeScript; the runtime holds dist/, production dependencies
# and the CRD (for the parent validation in src/server.ts), and runs as an unprivileged user.
# metacontroller-ts comes from vendor/ (packed there by metactl init), so the build needs nothing
# outside this directory.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY deploy/crd.yaml ./deploy/crd.yaml
USER 1000:1000
EXPOSE 8080
CMD ["node", "dist/server.js"]
`,
    '.dockerignore': 'node_modules\ndist\n.git\n',
    '.gitignore': 'node_modules/\ndist/\n',
  }
}

/** `README.md`. */
export function readme(n: ScaffoldNames): string {
  return `# ${n.name}

A Kubernetes controller written with [metacontroller-ts](https://github.com/metacontroller-ts/metacontroller-ts):
a \`${n.kind}\` (\`${n.group}/${n.version}\`) asks for \`spec.replicas\` ConfigMaps holding
\`spec.message\`; the sync hook in \`src/hook.ts\` says which, and the engine makes it so.

\`\`\`sh
npm install
npm test                 # type-check, the hook's unit test, and the controller on a local control plane
npx metactl dev          # local cluster + engine + your hook, reloaded when you save
kubectl apply -f deploy/samples/hello.yaml    # in another shell, with the KUBECONFIG dev prints
npx metactl tree ${n.kind.toLowerCase()}/hello
\`\`\`

| file | what |
|---|---|
| \`deploy/crd.yaml\` | the CRD: structural schema, validation, status, printer columns |
| \`deploy/controller.yaml\` | the CompositeController; its webhook is the hook's Service |
| \`deploy/hook.yaml\`, \`deploy/kustomization.yaml\` | the hook's Deployment and Service; \`kubectl apply -k deploy\` |
| \`deploy/rbac.yaml\` | what the engine may do to the parents and children (aggregated into metacontroller-ts' engine role), from \`npx metactl rbac -f deploy/controller.yaml\` |
| \`vendor/\` | metacontroller-ts, packed by \`metactl init\` (the Dockerfile installs it from here) |
| \`src/types.ts\` | the ${n.kind} types, generated from the CRD: \`npm run types\` after changing it |
| \`src/hook.ts\` | the sync hook |
| \`src/server.ts\` | the hook as a webhook (\`PORT\`, \`HOST\`), for the image |
| \`test/hook.test.ts\` | the hook without a cluster (\`callCompositeHook\`) |
| \`test/controller.test.ts\` | the controller on a real local control plane (\`startControlPlane\`) |
| \`Dockerfile\` | the hook image |

The local cluster's binaries are built once with \`npx metactl cluster install\` (Go >= 1.26,
about 16 minutes cold); \`npm test\` fails and says so while they are missing. With a cluster of
your own instead (kind, k3d, any): \`METACTL_USE_EXISTING_CLUSTER=1 npm test\` (the cluster of
\`$KUBECONFIG\`, context \`$METACTL_CONTEXT\` or the current one) and
\`npx metactl dev --kubeconfig FILE --context NAME\`. \`METACTL_SKIP_CLUSTER_TESTS=1 npm test\` skips
the cluster test.

In a cluster: install an engine (metacontroller-ts' \`deploy/manifests\`, or upstream
Metacontroller), build and load the image (\`docker build -t ${n.name}-hook:dev .\`; metacontroller-ts
comes from \`vendor/\`, so the build needs nothing outside this directory: commit \`vendor/\`), then
\`kubectl apply -k deploy\`. \`deploy/rbac.yaml\` grants metacontroller-ts' engine its rights on
your parents and children: after changing \`deploy/controller.yaml\`, write it again with
\`npx metactl rbac -f deploy/controller.yaml > deploy/rbac.yaml\`. See metacontroller-ts'
docs/deploy-your-controller.md.
`
}
