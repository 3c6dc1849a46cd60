#!/usr/bin/env bash
# End-to-end test with the stock Python Expo SDK: `pushrelay simulate` as APNs/FCM/Expo, `pushrelay serve` on
# loopback with a tenant and key made by the CLI, then scripts/expo-sdk/e2e.py drives the relay through the SDK
# (publish_multiple, check_receipts_multiple, the legacy check_receipts with the key in the host, a legacy field,
# a late DeviceNotRegistered receipt, refused credentials).
#
# Usage: scripts/expo-sdk-test.sh      (scripts/test.sh runs it after the Swift tests)
#
# The SDK comes from PyPI into a virtual environment under .build/ (pinned: EXPO_SDK_VERSION, default 2.2.0).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

sdk_version="${EXPO_SDK_VERSION:-2.2.0}"
venv=.build/expo-sdk-venv

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    ./scripts/bootstrap.sh python3 python3-venv
fi
swift build --product pushrelay
pushrelay="$PWD/.build/debug/pushrelay"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import exponent_server_sdk" >/dev/null 2>&1; then
    echo "expo-sdk-test: installing exponent_server_sdk $sdk_version from PyPI into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "exponent_server_sdk==$sdk_version"
fi
python="$venv/bin/python"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits up to 60 s for a command to succeed; names what it waited for when it gives up.
wait_for() {
    local what="$1"
    shift
    for _ in $(seq 1 600); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "expo-sdk-test: gave up waiting for $what" >&2
    for log in "$work"/*.log; do echo "--- $log" >&2; tail -n 30 "$log" >&2; done
    exit 1
}

sim_port="$(free_port)"
relay_port="$(free_port)"
"$pushrelay" simulate --listen "127.0.0.1:$sim_port" --out "$work/sim" >"$work/simulate.log" 2>&1 &
pids+=($!)
wait_for "the simulator" test -s "$work/sim/relay.conf.fragment"

{
    printf '[server]\nlisten = "127.0.0.1:%s"\n[store]\nurl = "sqlite://%s/relay.db"\n' "$relay_port" "$work"
    cat "$work/sim/relay.conf.fragment"
} >"$work/relay.conf"
# Ask the simulator for Expo receipts 1 s after sending rather than 15 minutes. Through the environment: the
# fragment's last section is the second app's, not [expo], so a line appended to the file would land there.
export PUSHRELAY_EXPO_RECEIPT_DELAY_SECONDS=1
"$pushrelay" tenant create sdk-e2e --config "$work/relay.conf" >/dev/null
key="$("$pushrelay" key issue --tenant sdk-e2e --config "$work/relay.conf" | sed -n 2p)"

"$pushrelay" serve --config "$work/relay.conf" >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for "the relay on port $relay_port" "$python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$relay_port/healthz')"

echo "expo-sdk-test: exponent_server_sdk $sdk_version against the relay on 127.0.0.1:$relay_port"
RELAY_URL="http://127.0.0.1:$relay_port" RELAY_KEY="$key" "$python" scripts/expo-sdk/e2e.py
