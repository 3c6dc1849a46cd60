#!/usr/bin/env bash
# Builds `pushrelay` and runs its demo.
#
# Usage: scripts/demo.sh [demo arguments ...]
#
# Installs missing system packages first (scripts/bootstrap.sh; needs root or sudo the first time). Until the demo
# exists (it arrives with the relay service), prints the version and help of the executable as it is today.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "demo: the Swift toolchain (6.2 or newer) is not on PATH; install it from https://swift.org/install" >&2
    exit 1
fi

./scripts/bootstrap.sh

echo "demo: building pushrelay (swift build --product pushrelay)"
swift build --product pushrelay
pushrelay=.build/debug/pushrelay

# `pushrelay help demo` fails while pushrelay has no subcommands, but once it has others, ArgumentParser answers
# `help <unknown>` with the top-level help and exit status 0. So also require the usage line of `demo` itself.
if demo_help="$("$pushrelay" help demo 2>/dev/null)" && [[ "$demo_help" == *"pushrelay demo"* ]]; then
    echo "demo: running pushrelay demo $*"
    exec "$pushrelay" demo "$@"
fi

echo "demo: pushrelay $("$pushrelay" --version)"
"$pushrelay" --help
echo
echo "demo: the demo arrives with the relay service; above is what pushrelay offers today."
echo "demo: run ./scripts/test.sh to exercise what exists (the push model, validation, payload builders)."
