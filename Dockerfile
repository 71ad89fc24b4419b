# syntax=docker/dockerfile:1
#
# The gns3-copilot binary in a small Debian image. docker-compose.yml runs it as `api` and
# `worker` against Temporal, PostgreSQL and Redis; `docker run IMAGE serve` would also need the
# Temporal CLI, which this image leaves out, so give `serve` a --temporal-address.
#
# cgo stays on although compose uses PostgreSQL: the binary would build without it (models links
# mattn/go-sqlite3, which then compiles to a stub), but SQLite, the default database, would fail
# at run time with "requires cgo", and the same image should also run without PostgreSQL. The
# builder and the runtime use the same Debian release so the binary finds the glibc it was
# linked against.

ARG GO_VERSION=1.26.8
ARG DEBIAN_RELEASE=trixie

FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/gns3-copilot ./cmd/gns3-copilot

FROM debian:${DEBIAN_RELEASE}-slim
# ca-certificates: hosted LLM providers are reached over HTTPS. curl: the compose healthcheck.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home copilot \
    && mkdir -p /data && chown copilot:copilot /data && chmod 0700 /data
COPY --from=build /out/gns3-copilot /usr/local/bin/gns3-copilot
USER copilot
# Inside a container the API must listen on every interface to be published.
ENV GNS3_COPILOT_DATA_DIR=/data \
    GNS3_COPILOT_LISTEN=0.0.0.0:8088
VOLUME ["/data"]
EXPOSE 8088
ENTRYPOINT ["gns3-copilot"]
CMD ["api"]
