#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: scripts/fuzz.sh TARGET SECONDS
#   TARGET: json | push-request | audit-export (Fuzz/relay-fuzz/RelayFuzz.swift)
#   SECONDS: how long to fuzz (libFuzzer's -max_total_time)
# Builds Fuzz/relay-fuzz with `-sanitize=fuzzer,address` in its own scratch path (.build/fuzz), so the normal build
# is untouched, then fuzzes from the checked-in seed corpus Fuzz/corpus/TARGET (read only: new inputs go to a
# temporary folder). Exits non-zero on a crash, a trap or a sanitizer report; the input that caused it is left in
# .build/fuzz/findings/. Set NICE=0 to build at normal priority.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="${1:?usage: scripts/fuzz.sh TARGET SECONDS (TARGET: json, push-request, audit-export)}"
seconds="${2:?usage: scripts/fuzz.sh TARGET SECONDS}"
case "$target" in
json | push-request | audit-export) ;;
*)
    echo "scripts/fuzz.sh: unknown target '$target' (json, push-request, audit-export)" >&2
    exit 2
    ;;
esac
corpus="Fuzz/corpus/$target"
[[ -d "$corpus" ]] || { echo "scripts/fuzz.sh: no seed corpus at $corpus" >&2; exit 2; }

nice_prefix=(nice -n "${NICE:-19}")
RELAY_FUZZ=1 "${nice_prefix[@]}" swift build --scratch-path .build/fuzz --product relay-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
binary="$(RELAY_FUZZ=1 swift build --scratch-path .build/fuzz --product relay-fuzz --show-bin-path)/relay-fuzz"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p .build/fuzz/findings
echo "scripts/fuzz.sh: fuzzing $target for ${seconds}s from $corpus"
# -rss_limit_mb: a body the relay accepts is at most 1 MiB, so an input that needs far more memory is a finding.
RELAY_FUZZ_TARGET="$target" "$binary" "$work" "$corpus" \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=1024 -timeout=10 \
    -artifact_prefix=.build/fuzz/findings/"$target"- -print_final_stats=1
