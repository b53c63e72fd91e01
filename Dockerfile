# Container image of mirror-sidecar: `docker build -t kafka-mirror-sidecar:0.1.0 .` (docs/deployment.md).
# Two stages: the build stage installs every dependency with `npm ci`, applies the kafkajs patch,
# compiles TypeScript and prunes the dev dependencies; the runtime stage holds only Node.js, the
# pruned node_modules and the compiled JavaScript, and runs as an unprivileged numeric user.
# Node.js 24 LTS on Debian 13 (trixie), the current Debian stable. CI runs the tests on Node 24 and 22.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied after this cached layer; the
# postinstall step (scripts/patch-kafkajs.mjs, which patches the package's own kafkajs) runs below
# once patches/ and scripts/ are there. Four dependencies have native
# code (@node-rs/crc32, @toondepauw/node-zstd, lz4-napi, snappy): each ships prebuilt Node-API
# binaries per platform as optional packages, so nothing is compiled; build and runtime stages use
# the same base image so the binaries npm picks here are the ones that run.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY patches ./patches
COPY src ./src
COPY scripts ./scripts
RUN node scripts/patch-kafkajs.mjs \
 && npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
# OCI image annotations (github.com/opencontainers/image-spec, annotations.md); VERSION is package.json's.
LABEL org.opencontainers.image.title="kafka-mirror-sidecar" \
      org.opencontainers.image.description="Kafka cross-cluster mirror (MirrorMaker 1 flags or an mm2.properties file) with exact offset mapping, Prometheus metrics and OpenTelemetry traces" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.documentation="README.md and docs/ in the npm package kafka-mirror-sidecar"
ENV NODE_ENV=production \
    MIRROR_METRICS_PORT=9464
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
# The image's `node` user by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
EXPOSE 9464
# Docker and Podman run this; Kubernetes ignores it and uses the probes in deploy/kubernetes/.
# It reads the port from MIRROR_METRICS_PORT: set the port through that variable, not --metrics.port.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.MIRROR_METRICS_PORT || 9464) + '/healthz').then(r => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# The bin itself as PID 1, never npm or npx: it receives SIGTERM and drains (README, "Five minutes against your own clusters").
ENTRYPOINT ["node", "/app/dist/src/bin/mirror-sidecar.js"]
CMD ["/etc/kafka-mirror/mm2.properties"]
