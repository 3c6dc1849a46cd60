# PushRelay container image.
#
#   docker build -t pushrelay .
#   docker run -p 8080:8080 \
#     -v ./relay.conf:/etc/pushrelay/relay.conf:ro \
#     -v pushrelay-data:/var/lib/pushrelay \
#     pushrelay
#
# Files named in relay.conf (APNs key, FCM service account, Expo token file) must be mounted too; relative paths
# resolve against /etc/pushrelay.

# ---- Build stage ------------------------------------------------------------------------------------------------
# Package.swift declares swift-tools-version 6.2, so the toolchain must be 6.2 or newer.
ARG SWIFT_IMAGE=swift:6.2-bookworm
FROM ${SWIFT_IMAGE} AS build

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libcurl4-openssl-dev libnghttp2-dev libssl-dev libsqlite3-dev zlib1g-dev \
       libjemalloc-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Resolve dependencies in their own layer: it is rebuilt only when the manifest (or Package.resolved) changes.
COPY Package.* ./
RUN swift package resolve

# The manifest names the test targets too, so their folders must exist for SwiftPM to load the package.
COPY Sources ./Sources
COPY Tests ./Tests

# --static-swift-stdlib links the Swift runtime and Foundation into the binary, so the run stage needs no Swift libs.
RUN swift build -c release --product pushrelay --static-swift-stdlib \
    && install -D "$(swift build -c release --show-bin-path)/pushrelay" /out/pushrelay

# ---- Run stage --------------------------------------------------------------------------------------------------
FROM debian:bookworm-slim

# libcurl4 (and libnghttp2-14) is the HTTP/2 client, libsqlite3-0 the store, zlib1g inflates gzipped bodies,
# libjemalloc2 is the allocator; ca-certificates verifies APNs, FCM and Expo;
# curl is for the HEALTHCHECK only.
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update \
    && apt-get install -y --no-install-recommends libcurl4 libnghttp2-14 libsqlite3-0 zlib1g libjemalloc2 \
       ca-certificates curl \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --system --user-group --home-dir /var/lib/pushrelay --shell /usr/sbin/nologin pushrelay \
    && install -d -o pushrelay -g pushrelay -m 0750 /var/lib/pushrelay \
    && install -d -m 0755 /etc/pushrelay

COPY --from=build /out/pushrelay /usr/local/bin/pushrelay

# A relative sqlite path would resolve next to the config file in /etc/pushrelay (read-only); keep data here.
ENV PUSHRELAY_STORE_URL=sqlite:///var/lib/pushrelay/pushrelay.db

# Mount the configuration at /etc/pushrelay/relay.conf (see the docker run line above).
VOLUME ["/var/lib/pushrelay"]
WORKDIR /var/lib/pushrelay
USER pushrelay

EXPOSE 8080

# Assumes the default listen address (port 8080).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz >/dev/null || exit 1

ENTRYPOINT ["pushrelay"]
CMD ["serve", "--config", "/etc/pushrelay/relay.conf"]
