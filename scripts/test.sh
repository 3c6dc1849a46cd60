#!/usr/bin/env bash
# Builds PushRelay and runs every test.
#
# The test harness's own variables start with RELAY_TEST_, not PUSHRELAY_: the relay reads every PUSHRELAY_* variable
# as configuration and refuses one that names no key, and the relay and its CLI run inside this script's environment.
#
# Usage: scripts/test.sh [swift test arguments ...]     e.g. scripts/test.sh --filter RelayCoreTests
#
# Installs missing system packages first (scripts/bootstrap.sh; needs root or sudo the first time).
#
# The store tests run against PostgreSQL too: the database RELAY_TEST_POSTGRES_URL names, or else a local
# PostgreSQL that scripts/postgres.sh installs and starts (root or sudo). When that is impossible the script stops
# rather than test without PostgreSQL; RELAY_TEST_POSTGRES=skip runs the tests without it, and says so.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "test: the Swift toolchain (6.2 or newer) is not on PATH; install it from https://swift.org/install" >&2
    exit 1
fi

./scripts/bootstrap.sh

if [ -n "${RELAY_TEST_POSTGRES_URL:-}" ]; then
    echo "test: PostgreSQL tests use the database RELAY_TEST_POSTGRES_URL names"
elif [ "${RELAY_TEST_POSTGRES:-}" = skip ]; then
    echo "test: WARNING: RELAY_TEST_POSTGRES=skip: the PostgreSQL store is NOT tested" >&2
else
    echo "test: starting a local PostgreSQL for the store tests (scripts/postgres.sh)"
    if ! url=$(./scripts/postgres.sh); then
        echo "test: PostgreSQL could not be installed or started (see above), so the PostgreSQL store cannot be" >&2
        echo "test: tested. Run as root or with sudo, set RELAY_TEST_POSTGRES_URL to a database you own" >&2
        echo "test: (postgres://user:password@host:5432/database), or set RELAY_TEST_POSTGRES=skip." >&2
        exit 1
    fi
    export RELAY_TEST_POSTGRES_URL="$url"
fi

echo "test: building the package and its tests (swift build --build-tests)"
swift build --build-tests

echo "test: running the tests (swift test $*)"
# The output is kept in .build/test-output.log too, so that CI can close with a one-line summary.
mkdir -p .build
if [ "$#" -eq 0 ]; then
    # A whole run: the tests that race real deadlines, one at a time after the rest: the upstream transport's live
    # tests (RelayHTTP2Tests, and the simulator end to end) and the listener's slow-client tests (SlowClientTests,
    # whose clients write on a schedule against the relay's header and body timeouts). Run beside 800 other tests on a
    # two-core machine, their deadlines sometimes lost the race to a starved thread (a client that must write every
    # 100 ms was not scheduled for seconds), which says nothing about the code; alone, or one at a time, they are
    # reliable. About two minutes on their own. The listener's live HTTP/2 tests (LiveHTTP2Tests) run there too: on a
    # fresh CI machine, beside the other 800, the client that resets 1,000 streams got no answer to its next request
    # in two runs of three (2026-11-27); alone, and in seven parallel runs on a warm machine, it always passed. The
    # cause is not known yet.
    transport='RelayHTTP2Tests|ProviderSimulatorEndToEndTests|SlowClientTests|LiveHTTP2Tests'
    swift test --skip "$transport" 2>&1 | tee .build/test-output.log
    swift test --skip-build --filter "$transport" --no-parallel 2>&1 | tee -a .build/test-output.log
else
    swift test "$@" 2>&1 | tee .build/test-output.log
fi

# The stock Python Expo SDK against a running relay and simulator (PyPI into a venv under .build/; under a minute).
# Only for a whole run: `scripts/test.sh --filter …` runs the Swift tests it names and nothing else.
if [ "$#" -eq 0 ] && [ "${RELAY_TEST_EXPO_SDK:-}" != skip ]; then
    echo "test: end to end with the stock Python Expo SDK (scripts/expo-sdk-test.sh)"
    ./scripts/expo-sdk-test.sh
fi
