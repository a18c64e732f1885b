# check=skip=SecretsUsedInArgOrEnv
# (That BuildKit rule flags CREDENTIALS_HOST, a listen address, as a secret. scripts/validate-deploy.sh
# runs the same check without that false positive: no ENV or ARG here may carry a secret.)

# One image for every service of the Resilience Score Data API; the command picks the service:
#
#   node services/embedded/dist/main.js       all five services in one process (default, `npm start`)
#   node services/read-api/dist/main.js       read API, distributed runtime       (port 8080)
#   node services/credentials/dist/main.js    credentials, distributed runtime    (port 8081)
#   node services/score-ingest/dist/main.js   score ingest, distributed runtime   (port 8082)
#   node services/notifier/dist/main.js       notifier (webhooks), distributed    (port 8083)
#   node services/console/dist/main.js        console (pages), distributed        (port 8084)
#
# Build: docker build -t rsd:dev .        (BuildKit, the default builder since Docker 23)
# Without a container registry: --build-arg NODE_IMAGE=localhost/rsd-node:bookworm, the local Node
# base scripts/containers.sh builds (README, "Containers without a registry").
# No HEALTHCHECK: orchestrators probe GET /healthz and /readyz on the API port themselves.
# No secret is baked in: JWT_* and connection strings come from the environment at run time.

# The only base image: every stage starts from it or from `manifests`.
ARG NODE_IMAGE=node:26-bookworm-slim

# ---------------------------------------------------------------- manifests
# Only the lockfile and the workspace package.json files (and the CLI launcher), so the dependency
# layers below are reused until a manifest changes. scripts/validate-deploy.sh fails when a
# workspace is missing here.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/api-documents/package.json libs/api-documents/
COPY libs/contracts/package.json libs/contracts/
COPY libs/domain/package.json libs/domain/
COPY libs/platform/package.json libs/platform/
COPY libs/ports/package.json libs/ports/
COPY libs/consumers/package.json libs/consumers/
COPY libs/embedded/package.json libs/embedded/
COPY libs/testkit/package.json libs/testkit/
COPY libs/kafka/package.json libs/kafka/
COPY libs/mongo/package.json libs/mongo/
COPY libs/redis/package.json libs/redis/
COPY libs/observability/package.json libs/observability/
COPY libs/runtime/package.json libs/runtime/
COPY libs/recipient-access/package.json libs/recipient-access/
COPY services/read-api/package.json services/read-api/
COPY services/credentials/package.json services/credentials/
COPY services/score-ingest/package.json services/score-ingest/
COPY services/notifier/package.json services/notifier/
COPY services/console/package.json services/console/
COPY services/embedded/package.json services/embedded/
COPY tools/cli/package.json tools/cli/
# A workspace too (the recipients' TypeScript SDK): the CLI verifies responses with it (`rsd … --verify`).
COPY sdks/typescript/package.json sdks/typescript/
# The `rsd` launcher, so npm links node_modules/.bin/rsd (`npx rsd` works in the image).
COPY tools/cli/bin/ tools/cli/bin/
# Fixes to dependencies that npm ci's postinstall applies (patch-package; why: patches/README.md).
COPY patches/ patches/

# ---------------------------------------------------------------- build
FROM manifests AS build
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund
COPY tsconfig.base.json ./
COPY libs libs
COPY services services
COPY tools tools
COPY sdks/typescript/tsconfig.json sdks/typescript/
COPY sdks/typescript/src sdks/typescript/src
# Compile the services and the CLI (tsc -b follows their references to the libs and the SDK they use;
# tests, libs/testkit and bench are not built), then gather package.json and dist of each workspace in /out.
RUN npx tsc -b services/embedded services/read-api services/credentials services/score-ingest services/notifier services/console tools/cli \
 && for ws in libs/* services/* tools/* sdks/typescript; do \
      [ -f "$ws/package.json" ] || continue; \
      mkdir -p "/out/$ws" && cp "$ws/package.json" "/out/$ws/"; \
      if [ -d "$ws/dist" ]; then cp -R "$ws/dist" "/out/$ws/"; fi; \
    done \
 && cp -R services/console/console-assets /out/services/console/ \
 && find /out -name '*.tsbuildinfo' -delete

# ---------------------------------------------------------------- production dependencies
FROM manifests AS prod-deps
# The SBOM (decision 57): CycloneDX, made by npm from the lockfile this stage installed, its production dependencies
# and the workspaces (--package-lock-only: read from node_modules, npm refuses a tree without the development
# dependencies the root names), shipped at /app/sbom.cdx.json; scripts/ci/containers.sh checks it and keeps a copy.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund \
 && npm sbom --sbom-format cyclonedx --omit dev --package-lock-only > sbom.cdx.json

# ---------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
# dumb-init as PID 1: forwards SIGTERM to node (graceful shutdown) and reaps zombies.
# /data is the embedded runtime's DATA_DIR (event log, authorizations, development secret): mount a
# volume there to keep them (docker run -v rsd-data:/data ...).
RUN apt-get update \
 && apt-get install -y --no-install-recommends dumb-init \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data \
 && chown node:node /data
WORKDIR /app
# Owned by root and read-only for the `node` user: the process cannot change its own code.
COPY --from=prod-deps /app/ ./
COPY --from=build /out/ ./
ENV NODE_ENV=production \
    READ_API_HOST=0.0.0.0 \
    CREDENTIALS_HOST=0.0.0.0 \
    SCORE_INGEST_HOST=0.0.0.0 \
    DATA_DIR=/data
# `node` (uid 1000) comes with the base image; numeric so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8081 8082 8083 8084
# OCI labels (decision 57). VERSION is the root package.json's (scripts/ci/containers.sh fails while they differ);
# REVISION is the commit built from: docker build --build-arg REVISION="$(git rev-parse HEAD)" . Last, so that a new
# revision changes no layer above.
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Resilience Score Data API" \
      org.opencontainers.image.description="The read API, credentials, score ingest, notifier and console, embedded or distributed" \
      org.opencontainers.image.source="https://github.com/resilience-score/resilience-score-data-api" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
ENTRYPOINT ["/usr/bin/dumb-init", "--"]
CMD ["node", "services/embedded/dist/main.js"]
