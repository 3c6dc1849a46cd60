#!/usr/bin/env bash
# Installs the Debian packages PushRelay needs to build and test, if any are missing.
#
# Usage: scripts/bootstrap.sh [extra-package ...]     e.g. scripts/bootstrap.sh postgresql
#
# Idempotent: when every package is already installed it changes nothing and needs no privileges. Otherwise it runs
# apt-get as root, through sudo when not root. The Swift toolchain itself is not installed here.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# libcurl (with nghttp2 for HTTP/2 and OpenSSL for TLS) is the upstream HTTP/2 client, linked through CCurl;
# SQLite is the embedded store, linked through GRDB; zlib inflates gzipped request bodies (the Expo SDKs send them);
# jemalloc is the executables' allocator (Package.swift).
packages=(libcurl4-openssl-dev libnghttp2-dev libssl-dev libsqlite3-dev zlib1g-dev libjemalloc-dev "$@")

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: dpkg/apt-get not found; this script supports Debian and Ubuntu." >&2
    echo "bootstrap: install these packages (or your system's equivalents) yourself: ${packages[*]}" >&2
    exit 1
fi

missing=()
for package in "${packages[@]}"; do
    if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed$'; then
        missing+=("$package")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "bootstrap: system packages already installed: ${packages[*]}"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "bootstrap: missing packages: ${missing[*]}" >&2
    echo "bootstrap: installing them needs root; run this script as root or install sudo." >&2
    exit 1
fi

echo "bootstrap: installing missing system packages: ${missing[*]}"
${as_root[@]+"${as_root[@]}"} apt-get update
${as_root[@]+"${as_root[@]}"} apt-get install -y --no-install-recommends "${missing[@]}"
echo "bootstrap: done."
