# PushRelay container image.
#
#   docker build -t pushrelay .
#   docker run -p 8080:8080 --stop-timeout 60 \
#     -v ./relay.conf:/etc/pushrelay/relay.conf:ro \
#     -v pushrelay-data:/var/lib/pushrelay \
#     pushrelay
#
# The image's own configuration is container/relay.conf at /etc/pushrelay/relay.conf (no ENV overrides, so a mounted
# file's values win). Files named in relay.conf (APNs key, FCM service account, Expo token file, TLS files) must be
# mounted too, readable by UID/GID 10001; relative paths resolve against /etc/pushrelay. The stop timeout must exceed
# [server] drain_seconds plus the listener's 30 s for HTTP/2 connections (Docs/operators.md: In a container).
#
# Base images are named in full (docker.io/library/…): podman and buildah have no default registry for short names.
#
# The run stage takes the binary from the stage BINARY_IMAGE names: the build stage by default; CI's container test
# (scripts/container-test.sh) passes an image holding /out/pushrelay that it built with the same `swift build` line
# (`--build-arg BINARY_IMAGE=…`), and builds only the run stage (`--target run`).

# Package.swift declares swift-tools-version 6.2, so the toolchain must be 6.2 or newer.
ARG SWIFT_IMAGE=docker.io/library/swift:6.2-bookworm
ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim
ARG BINARY_IMAGE=build

# ---- Build stage ------------------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build

# libcurl 8 comes from bookworm-backports (bookworm's 7.88.1 mishandles HTTP/2), its two packages named singly,
# added on the image's own Debian mirror with Debian's archive keyring, as scripts/bootstrap.sh does.
RUN export DEBIAN_FRONTEND=noninteractive \
    && mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources | head -n 1)" \
    && printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' \
       "${mirror:-http://deb.debian.org/debian}" /usr/share/keyrings/debian-archive-keyring.gpg \
       > /etc/apt/sources.list.d/pushrelay-backports.sources \
    && apt-get update \
    && apt-get install -y --no-install-recommends libnghttp2-dev libssl-dev libsqlite3-dev zlib1g-dev libjemalloc-dev \
       libcurl4-openssl-dev/bookworm-backports libcurl4/bookworm-backports \
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

# ---- The binary -------------------------------------------------------------------------------------------------
FROM ${BINARY_IMAGE} AS binary

# ---- Run stage --------------------------------------------------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS run

# libnghttp2-14 and libssl3 are the HTTP/2 client, libcurl4 (8, from bookworm-backports as in the build stage, named
# singly: `-t bookworm-backports` would upgrade unrelated packages from backports too) the proxy-capable one;
# libsqlite3-0 the store, zlib1g inflates gzipped bodies, libjemalloc2 is the allocator; ca-certificates verifies
# APNs, FCM and Expo. The HEALTHCHECK is `pushrelay healthcheck`, which needs no curl.
RUN export DEBIAN_FRONTEND=noninteractive \
    && mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources | head -n 1)" \
    && printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' \
       "${mirror:-http://deb.debian.org/debian}" /usr/share/keyrings/debian-archive-keyring.gpg \
       > /etc/apt/sources.list.d/pushrelay-backports.sources \
    && apt-get update \
    && apt-get install -y --no-install-recommends libnghttp2-14 libssl3 libsqlite3-0 zlib1g libjemalloc2 \
       ca-certificates libcurl4/bookworm-backports \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*

# A fixed UID and GID (10001), so that secrets mounted from the host can be owned by it (chown 10001:10001, mode 0600).
RUN groupadd --system --gid 10001 pushrelay \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/pushrelay --shell /usr/sbin/nologin pushrelay \
    && install -d -o pushrelay -g pushrelay -m 0750 /var/lib/pushrelay \
    && install -d -m 0755 /etc/pushrelay

COPY --from=binary /out/pushrelay /usr/local/bin/pushrelay
# The defaults of the image: the store in the data volume, an instance id per container ("auto"). No ENV overrides: a
# variable would win over the file an operator mounts here.
COPY container/relay.conf /etc/pushrelay/relay.conf

# Mount the configuration at /etc/pushrelay/relay.conf (see the docker run line above).
VOLUME ["/var/lib/pushrelay"]
WORKDIR /var/lib/pushrelay
USER pushrelay

EXPOSE 8080

# Reads the listen address and TLS settings from the same configuration as serve (/etc/pushrelay/relay.conf, or
# $PUSHRELAY_CONFIG), so it follows a changed port or TLS.
HEALTHCHECK --interval=30s --timeout=10s --start-period=15s --retries=3 \
    CMD ["pushrelay", "healthcheck", "--timeout", "5"]

# SIGTERM drains (Docs/operators.md): give it more than Docker's default 10 s, e.g. `docker run --stop-timeout 60`
# or compose's `stop_grace_period: 60s` (drain_seconds 20 + up to 30 s for HTTP/2 connections + margin).
STOPSIGNAL SIGTERM

ENTRYPOINT ["pushrelay"]
CMD ["serve"]
