#!/usr/bin/env bash
# Builds PushRelay and runs every test.
#
# Usage: scripts/test.sh [swift test arguments ...]     e.g. scripts/test.sh --filter RelayCoreTests
#
# Installs missing system packages first (scripts/bootstrap.sh; needs root or sudo the first time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "test: the Swift toolchain (6.2 or newer) is not on PATH; install it from https://swift.org/install" >&2
    exit 1
fi

./scripts/bootstrap.sh

echo "test: building the package and its tests (swift build --build-tests)"
swift build --build-tests

echo "test: running the tests (swift test $*)"
# The output is kept in .build/test-output.log too, so that CI can close with a one-line summary.
mkdir -p .build
swift test "$@" 2>&1 | tee .build/test-output.log
