#!/usr/bin/env bash
# Checks the formatting of the Swift sources, or fixes it. The rules are in .swift-format; Docs/style.md explains them.
#
# Usage: scripts/format.sh          lint: exits 1 when a file is not as `swift format` would write it, breaks one of
#                                   the lint rules, or has a comment line over 120 columns; changes nothing
#        scripts/format.sh --fix    formats in place (swift format, then scripts/rewrap-comments.py), then lints
#
# Needs only the Swift toolchain, which ships `swift format` (swift-format) since 6.0; no network, no packages, no
# build. Different toolchains' swift-format can format a few constructs differently: CI's toolchain is the reference.
# The comment re-wrapping needs python3; without it --fix says so and the lint reports the long comments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

paths=(Sources Tests Package.swift)
limit=120

fix=false
case "${1:-}" in
    "") ;;
    --fix) fix=true ;;
    -h | --help)
        sed -n '2,10s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
        exit 0
        ;;
    *)
        echo "format: unknown argument '$1' (usage: scripts/format.sh [--fix])" >&2
        exit 2
        ;;
esac

if ! command -v swift >/dev/null 2>&1; then
    echo "format: the Swift toolchain is not on PATH; install it from https://swift.org/install" >&2
    exit 1
fi
if ! version=$(swift format --version 2>/dev/null); then
    echo "format: 'swift format' is missing: it ships with Swift 6.0 and newer toolchains" >&2
    exit 1
fi

if [ "$fix" = true ]; then
    echo "format: swift format $version: formatting ${paths[*]} in place"
    swift format format --in-place --recursive --parallel "${paths[@]}"
    if command -v python3 >/dev/null 2>&1; then
        # swift format never breaks a comment, and may indent one further: re-wrap those now over the limit.
        python3 scripts/rewrap-comments.py --limit "$limit" "${paths[@]}"
    else
        echo "format: python3 not found: comment lines over $limit columns are not re-wrapped" >&2
    fi
fi

status=0

echo "format: swift format $version: lint --strict ${paths[*]}"
swift format lint --strict --recursive --parallel "${paths[@]}" || status=1

# swift format's own line-length rule reports only what it could break; comments are never broken, so they are
# checked here. Not reported: table rows (`/// | … |`) and a comment that is nothing but a URL. Characters, not bytes,
# are counted (C.UTF-8).
long_comments=$(
    LC_ALL=C.UTF-8 grep -rnE --include='*.swift' "^.{$((limit + 1)),}\$" "${paths[@]}" |
        grep -E '^[^:]+:[0-9]+:[[:space:]]*//' |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*//+[[:space:]]*(\||[^[:space:]]*://[^[:space:]]*[[:space:]]*$)' || true
)
if [ -n "$long_comments" ]; then
    cut -d: -f1,2 <<<"$long_comments" | sed "s/\$/: comment line over $limit columns/" >&2
    status=1
fi

if [ "$status" -ne 0 ]; then
    echo "format: findings above; scripts/format.sh --fix fixes most of them (Docs/style.md, Formatting)" >&2
else
    echo "format: no findings"
fi
exit "$status"
