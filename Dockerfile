# syntax=docker/dockerfile:1
# The engine image: `docker build -t ghcr.io/metacontroller-ts/metacontroller-ts:0.1.0 .`
# (docs/deploy.md). Two stages: `build` compiles TypeScript to dist/; the runtime stage holds only
# dist/, bin/, the CRDs and production dependencies, and runs as a non-root user. Its default
# command is `metactl run`; `/usr/bin/metacontroller` runs upstream's manifests unchanged.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: the `prepare` build needs the sources, copied next.
RUN npm ci --ignore-scripts
COPY tsconfig.base.json tsconfig.build.json ./
COPY src ./src
RUN npm run build
# The image's SBOM (CycloneDX JSON, docs/deploy.md "Supply chain"): the production packages of the
# same lock file the runtime stage installs, and the Node.js runtime of the same base image.
COPY scripts/image-sbom.mjs ./scripts/
RUN node scripts/image-sbom.mjs sbom.cdx.json

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="metacontroller-ts" \
      org.opencontainers.image.description="A Metacontroller-compatible engine for Kubernetes lambda controllers, in TypeScript" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/metacontroller-ts/metacontroller-ts"
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# npm's cache, logs and V8 compile cache go too: named or filled by the clock and by V8's own
# choices, they would make every build's digest differ.
RUN npm ci --omit=dev --ignore-scripts && rm -rf /root/.npm /tmp/node-compile-cache
COPY --from=build /src/dist ./dist
COPY --from=build /src/sbom.cdx.json ./sbom.cdx.json
COPY bin ./bin
COPY deploy/crds ./deploy/crds
# Upstream's binary path, which upstream's manifests and chart name as the container's `command`:
# the engine with upstream's bare flags (bin/metacontroller.js).
RUN ln -s /app/bin/metacontroller.js /usr/bin/metacontroller
# The `node` user of the official image, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9999 8081
ENTRYPOINT ["node", "bin/metactl.js"]
CMD ["run"]
