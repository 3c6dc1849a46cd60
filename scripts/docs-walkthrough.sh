#!/usr/bin/env bash
# Runs the first-day walk-throughs of Docs/operators.md and Docs/auditors.md, as written, against the built
# `pushrelay`: every command of a block marked as part of the walk-through, in document order, in one bash session
# (so `cd`, variables and background jobs carry from one block to the next), in a new temporary directory.
#
# Usage: scripts/docs-walkthrough.sh            run them (builds pushrelay first if .build/debug/pushrelay is missing)
#        scripts/docs-walkthrough.sh --list     print the commands it would run, with their doc and line, and exit
#
# Which blocks run. A fenced block whose info string is
#   ```sh walkthrough            every line is a command (comments and here-documents included);
#   ```console walkthrough       lines starting with "$ " are commands, with their continuation lines (after a line
#                                ending in "\"); every other line is example output, shown to the reader, not checked;
#   ```sh walkthrough-postgres   as `sh walkthrough`, but needs a PostgreSQL server (below).
# Every other block is shown to readers only. Those are, by kind, the commands this script cannot run here:
#   - installing (scripts/bootstrap.sh, `install` into /usr/local/bin): needs root and changes the machine; the
#     script runs the debug build instead, from a temporary bin directory put first on PATH;
#   - docker, docker compose, systemctl, Kubernetes: no container engine or init system on CI;
#   - real APNs, FCM or Expo credentials: the walk-through sends through `pushrelay simulate` instead;
#   - reference examples with output from a production relay (months of audit records, fixed dates, `bad.conf`):
#     the same commands with the same options run in the walk-through blocks on this relay's own records;
#   - an upstream proxy and `relay-bench`: they need a proxy and minutes of load; the test suite and CI's fault run
#     cover them.
#
# The relays and the simulator listen on free ports: the script replaces 127.0.0.1:8080 and 127.0.0.1:8081 (relays)
# and 127.0.0.1:8443 (the simulator) in the commands with free ones, and kills whatever the blocks left running at
# the end. It runs with HOME set to its temporary directory (the blocks work in ~/relay, ~/relay-pg, ~/evidence) and
# without PUSHRELAY_* variables.
#
# PostgreSQL. The `walkthrough-postgres` blocks use scripts/postgres.sh's database,
# postgres://pushrelay:pushrelay@127.0.0.1:5432/pushrelay_test?sslmode=disable (the script replaces that URL with
# $DOCS_WALKTHROUGH_POSTGRES_URL when set) in the schema `pushrelay`, which it drops first. They run when that
# database answers, and must run when DOCS_WALKTHROUGH_POSTGRES_URL is set (.ci/run sets it from scripts/postgres.sh);
# otherwise they are skipped with a notice.
#
# Exits 0 when every command succeeded. The first command that fails stops the run with
# "docs-walkthrough: FAILED at Docs/<file>.md:<line>"; the temporary directory is then kept for a look.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

docs=(Docs/operators.md Docs/auditors.md)
doc_postgres_url='postgres://pushrelay:pushrelay@127.0.0.1:5432/pushrelay_test?sslmode=disable'

say() { echo "docs-walkthrough: $*" >&2; }

# MARK: - Extraction

# Prints "<doc>\t<line>\t<kind>\t<command text>" for each command line of the marked blocks, in order. <kind> is
# `sh` or `postgres`. Fails on a marked block that is never closed.
extract() {
    local doc
    for doc in "${docs[@]}"; do
        awk -v doc="$doc" '
            BEGIN { inside = 0; marked = 0 }
            /^```/ {
                if (!inside) {
                    inside = 1; marked = 0; continued = 0; start = NR
                    info = substr($0, 4)
                    if (info ~ /^sh walkthrough[ \t]*$/) { marked = 1; style = "sh"; kind = "sh" }
                    else if (info ~ /^sh walkthrough-postgres[ \t]*$/) { marked = 1; style = "sh"; kind = "postgres" }
                    else if (info ~ /^console walkthrough[ \t]*$/) { marked = 1; style = "console"; kind = "sh" }
                    next
                }
                if ($0 ~ /^```[ \t]*$/) { inside = 0; marked = 0; next }
            }
            inside && marked {
                if (style == "sh") { print doc "\t" NR "\t" kind "\t" $0; next }
                if (continued) { print doc "\t" NR "\t" kind "\t" $0; continued = ($0 ~ /\\$/); next }
                if (substr($0, 1, 2) == "$ ") {
                    print doc "\t" NR "\t" kind "\t" substr($0, 3); continued = ($0 ~ /\\$/)
                }
            }
            END {
                if (inside && marked) { print "unclosed walk-through block at " doc ":" start > "/dev/stderr"; exit 1 }
            }
        ' "$doc"
    done
}

lines="$(extract)"
if [ -z "$lines" ]; then
    say "no walk-through blocks in ${docs[*]}"
    exit 1
fi

if [ "${1:-}" = --list ]; then
    printf '%s\n' "$lines" | awk -F '\t' '{ printf "%s:%s%s\t%s\n", $1, $2, ($3 == "postgres" ? " (postgres)" : ""), $4 }'
    exit 0
fi
if [ $# -gt 0 ]; then
    say "usage: scripts/docs-walkthrough.sh [--list]"
    exit 64
fi

# MARK: - What it runs against

binary="${PUSHRELAY_BIN:-$root/.build/debug/pushrelay}"
if [ ! -x "$binary" ]; then
    say "building pushrelay (swift build --product pushrelay)"
    swift build --product pushrelay
    binary="$root/.build/debug/pushrelay"
fi
for tool in curl openssl; do
    command -v "$tool" >/dev/null 2>&1 || ./scripts/bootstrap.sh "$tool" >&2
done

# A port nothing listens on now (bash's /dev/tcp: no other tool needed).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}
relay_port="$(free_port)"
second_relay_port="$(free_port)"
while [ "$second_relay_port" = "$relay_port" ]; do second_relay_port="$(free_port)"; done
simulator_port="$(free_port)"
while [ "$simulator_port" = "$relay_port" ] || [ "$simulator_port" = "$second_relay_port" ]; do
    simulator_port="$(free_port)"
done

postgres_url="${DOCS_WALKTHROUGH_POSTGRES_URL:-$doc_postgres_url}"
run_postgres=no
if printf '%s\n' "$lines" | awk -F '\t' '$3 == "postgres"' | grep -q .; then
    if command -v psql >/dev/null 2>&1 \
        && PGCONNECT_TIMEOUT=5 psql --no-psqlrc --quiet "$postgres_url" \
            --command 'DROP SCHEMA IF EXISTS pushrelay CASCADE' >/dev/null 2>&1; then
        run_postgres=yes
    elif [ -n "${DOCS_WALKTHROUGH_POSTGRES_URL:-}" ]; then
        say "DOCS_WALKTHROUGH_POSTGRES_URL is set, but PostgreSQL does not answer there (or psql is missing)"
        exit 1
    else
        say "skipping the walkthrough-postgres blocks: no PostgreSQL answers at $doc_postgres_url"
        say "(run scripts/postgres.sh, or set DOCS_WALKTHROUGH_POSTGRES_URL)"
    fi
fi

# MARK: - The session

scratch="$(mktemp -d "${TMPDIR:-/tmp}/docs-walkthrough.XXXXXX")"
mkdir -p "$scratch/bin" "$scratch/work"
ln -s "$binary" "$scratch/bin/pushrelay"
session="$scratch/session.sh"
map="$scratch/map.sh"

# The session's first lines; a doc's command line N of the listing is then line header + N of the script, and
# map.sh names its doc and line for the trace (PS4) and for the failure message.
cat >"$session" <<'EOF'
set -euo pipefail
source "$WALKTHROUGH_MAP"
PS4='+ ${__where[$LINENO]:-docs-walkthrough}: '
trap '{ status=$?; set +x; } 2>/dev/null; echo "docs-walkthrough: FAILED at ${__where[$LINENO]:-an unknown line} (exit status $status)" >&2; exit $status' ERR
trap 'exit 143' TERM INT
trap '{ set +x; } 2>/dev/null; for job in $(jobs -p); do kill "$job" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
set -x
EOF
header=$(wc -l <"$session")
echo 'declare -A __where' >"$map"

count=0
skipped=0
number=$header
while IFS=$'\t' read -r doc line kind text; do
    if [ "$kind" = postgres ] && [ "$run_postgres" = no ]; then
        skipped=$((skipped + 1))
        continue
    fi
    text="${text//127.0.0.1:8080/127.0.0.1:$relay_port}"
    text="${text//127.0.0.1:8081/127.0.0.1:$second_relay_port}"
    text="${text//127.0.0.1:8443/127.0.0.1:$simulator_port}"
    text="${text//"$doc_postgres_url"/"$postgres_url"}"
    number=$((number + 1))
    printf '%s\n' "$text" >>"$session"
    printf '__where[%d]=%q\n' "$number" "$doc:$line" >>"$map"
    count=$((count + 1))
done <<<"$lines"

say "running $count command lines of ${docs[*]} in $scratch/work (relay ports $relay_port and" \
    "$second_relay_port, simulator port $simulator_port; postgres blocks: $run_postgres$([ "$skipped" -eq 0 ] || echo ", $skipped lines skipped"))"

started=$SECONDS
set +e
(
    cd "$scratch/work"
    # A clean environment for the commands: no configuration but the one the walk-through writes.
    unset PUSHRELAY_CONFIG PUSHRELAY_ACTOR
    for variable in $(env | sed -n 's/^\(PUSHRELAY_[A-Z0-9_]*\)=.*/\1/p'); do unset "$variable"; done
    PATH="$scratch/bin:$PATH" WALKTHROUGH_MAP="$map" HOME="$scratch/work" exec timeout --signal=TERM 300 bash "$session"
)
status=$?
set -e

if [ "$status" -ne 0 ]; then
    [ "$status" -ne 124 ] || say "FAILED: the walk-through took more than 300 s"
    say "FAILED (exit status $status) after $((SECONDS - started)) s; its files are kept in $scratch/work"
    exit 1
fi
rm -rf "$scratch"
say "OK: $count command lines of ${docs[*]} ran in $((SECONDS - started)) s"
