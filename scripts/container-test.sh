#!/usr/bin/env bash
# Builds PushRelay's container image from the project's Dockerfile and checks it, and the compose set-up with
# PostgreSQL, with rootful podman (Debian's; daemonless, it reads Dockerfiles): CI's machines have a Docker client and
# no engine. Run by .ci/run after the release build; not by scripts/test.sh (it needs root).
#
# Usage: scripts/container-test.sh
#
# What it does, in order:
#   1. installs podman, runc, uidmap, podman-compose, netavark, aardvark-dns, debootstrap, iptables and jq from Debian
#      if missing (through scripts/bootstrap.sh); podman runs with runc (crun fails here: "cgroups in hybrid mode not
#      supported"), the cgroupfs cgroup manager, the file events logger, netavark, and nofile and nproc limits of 20000
#      and 32768 (runc may not set podman's defaults here: "error setting rlimit … operation not permitted"), from a
#      containers.conf of its own (CONTAINERS_CONF), so the machine's podman configuration is left alone;
#   2. makes the base image localhost/debian:bookworm-slim with `debootstrap --variant=minbase bookworm` and
#      `podman import` (no registry is reachable from CI), kept in $CONTAINER_TEST_CACHE (default
#      /var/cache/pushrelay-container-test) and in podman's store, so a machine that keeps them does it once;
#   3. builds the image's run stage (`podman build --format docker --target run`: without --format docker the
#      HEALTHCHECK is dropped) with the release binary CI built with `swift build -c release --product pushrelay
#      --static-swift-stdlib`, exactly as the Dockerfile's build stage does, handed in as an image holding
#      /out/pushrelay (`--build-arg BINARY_IMAGE=…`). The build stage itself is a standard `swift build` whose base
#      image (docker.io/library/swift:6.2-bookworm) cannot be pulled here; when podman has that image locally, the
#      whole Dockerfile is built instead. The image is tagged localhost/pushrelay, the `pushrelay` of the docs;
#   4. checks, each printed as PASS or FAIL: the build context's size (.dockerignore); `ldd` inside the image; that
#      `check-config` passes; a container (host network, SQLite in a volume, `pushrelay simulate` on the host)
#      answers /healthz and /readyz; `podman healthcheck run` (periodic health checks need systemd); the process runs
#      as 10001:10001; the store, its WAL and the journal key are 0600 and the process's; a push through the
#      container to the simulator is delivered and its receipt final; SIGTERM with pushes in flight drains within
#      drain_seconds and nothing is lost (every receipt final after a restart on the same volume); the `docker run`
#      lines of Docs/operators.md ("In a container") as written, through podman; deploy/compose.yaml as it is, with
#      podman-compose and a local PostgreSQL image (POSTGRES_IMAGE; Debian's PostgreSQL 15 on the same base, with
#      the official image's POSTGRES_* variables and pg_isready): it serves, a tenant survives `down` and `up`, and
#      the relay comes up when the database starts 30 s after it; and two replicas of the image on that database,
#      with the image's own `[audit] instance = "auto"`, both serve with no 5xx, their receipts final, and
#      `pushrelay audit verify` shows their two chains intact.
#
# Needs root, the network to the Debian mirror (debootstrap, apt-get in the run stage), port 8080 free (the docs'
# commands and compose.yaml publish it), and the release binary (CONTAINER_TEST_BINARY, default
# .build/release/pushrelay). It removes what it made (containers, volumes, networks, the simulators) at the end, but
# keeps the images, so a second run builds from podman's layer cache. Exits 1 when any check failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
started=$(date +%s)

cache="${CONTAINER_TEST_CACHE:-/var/cache/pushrelay-container-test}"
binary="${CONTAINER_TEST_BINARY:-$root/.build/release/pushrelay}"
base_image=localhost/debian:bookworm-slim
binary_image=localhost/pushrelay-binary:test
image=localhost/pushrelay:latest
postgres_image=localhost/pushrelay-test-postgres:15
swift_image=docker.io/library/swift:6.2-bookworm
# Containers, volumes and the network of the checks that are not the docs' or compose's own.
prefix=pushrelay-test
failures=0
work="$(mktemp -d /tmp/pushrelay-container-test.XXXXXX)"
simulator_pids=()

say() { echo "container-test: $*"; }
pass() { say "PASS: $*"; }
fail() {
    say "FAIL: $*"
    failures=$((failures + 1))
}
elapsed() { echo "$(($(date +%s) - started)) s"; }

# Runs "$@" up to $1 seconds (once a second) until it succeeds.
wait_for() {
    local seconds=$1
    shift
    local deadline=$(($(date +%s) + seconds))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 1
    done
}

# MARK: - Clean-up

# podman-compose names the project after the folder.
compose_dir="$work/pushrelay-compose-test"
compose_project=pushrelay-compose-test
# What a run makes besides compose's: removed at the end, and at the start should an earlier run have been cut short.
remove_containers() {
    local name
    for name in pushrelay "$prefix-relay" "$prefix-waiting" "$prefix-replica-1" "$prefix-replica-2"; do
        podman rm -f -v -t 0 "$name" >/dev/null 2>&1 || true
    done
    for name in pushrelay-data "$prefix-data"; do podman volume rm -f "$name" >/dev/null 2>&1 || true; done
}
cleanup() {
    local status=$?
    set +e
    for pid in ${simulator_pids[@]+"${simulator_pids[@]}"}; do kill -TERM "$pid" 2>/dev/null; done
    if [ -f "$compose_dir/compose.yaml" ]; then
        (cd "$compose_dir" && POSTGRES_IMAGE="$postgres_image" podman-compose down -v >/dev/null 2>&1)
        podman network rm -f "${compose_project}_default" >/dev/null 2>&1
    fi
    remove_containers
    for pid in ${simulator_pids[@]+"${simulator_pids[@]}"}; do wait "$pid" 2>/dev/null; done
    if [ "$failures" -eq 0 ] && [ "$status" -eq 0 ]; then
        rm -rf "$work"
    else
        say "kept $work for a look (logs of the relays and simulators)"
    fi
}
trap cleanup EXIT

# MARK: - 1. podman

# netavark and aardvark-dns named: podman's dependencies take either netavark or CNI's plugins, and compose's service
# names (db) resolve only through aardvark-dns, which netavark merely recommends.
packages=(podman runc uidmap podman-compose netavark aardvark-dns debootstrap iptables jq)
./scripts/bootstrap.sh "${packages[@]}" >/dev/null
mkdir -p "$cache"
cat >"$cache/containers.conf" <<'EOF'
# Written by scripts/container-test.sh for its own podman runs (CONTAINERS_CONF).
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
EOF
export CONTAINERS_CONF="$cache/containers.conf"
say "podman $(podman version --format '{{.Client.Version}}'), runc, podman-compose ready ($(elapsed))"
remove_containers

# MARK: - 2. The base image

if ! podman image exists "$base_image"; then
    tarball="$cache/debian-bookworm-slim.tar"
    if [ ! -s "$tarball" ]; then
        say "making $base_image with debootstrap --variant=minbase bookworm (once per machine)"
        mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
        mirror="${mirror:-http://deb.debian.org/debian}"
        rm -rf "$cache/rootfs"
        debootstrap --variant=minbase bookworm "$cache/rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
            tail -n 20 "$cache/debootstrap.log" >&2
            exit 1
        }
        # As the official image has it: deb822 sources (the Dockerfile reads the mirror from them), no lists.
        rm -f "$cache/rootfs/etc/apt/sources.list"
        printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: %s\n' \
            "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg >"$cache/rootfs/etc/apt/sources.list.d/debian.sources"
        rm -rf "$cache/rootfs/var/lib/apt/lists/"* "$cache/rootfs/var/cache/apt/"*.bin
        tar -C "$cache/rootfs" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
        rm -rf "$cache/rootfs"
    fi
    podman import --change 'CMD ["bash"]' "$tarball" "$base_image" >/dev/null
fi
say "base image $base_image ready ($(elapsed))"

# MARK: - 3. The image

# image_id NAME: the image's id, or nothing. drop_replaced NAME OLD_ID: removes OLD_ID once NAME names another image,
# so that repeated runs do not pile up untagged images (the binary alone is 200 MB).
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
drop_replaced() {
    if [ -n "$2" ] && [ "$(image_id "$1")" != "$2" ]; then podman rmi -f "$2" >/dev/null 2>&1 || true; fi
}

context_size_kb() {
    # What podman sends as the context (.dockerignore applied), copied into a throw-away image and measured there.
    printf 'FROM %s\nCOPY . /context\n' "$base_image" >"$work/Context.Dockerfile"
    podman build --no-cache -q -f "$work/Context.Dockerfile" -t "$prefix-context" . >/dev/null
    podman run --rm "$prefix-context" sh -c 'du -sk /context | cut -f1; find /context -maxdepth 3 -name ".build*" | wc -l'
    podman rmi -f "$prefix-context" >/dev/null 2>&1 || true
}
read -r -d '' context_kb build_folders < <(context_size_kb && printf '\0') || true
if [ -n "$context_kb" ] && [ "$context_kb" -lt 51200 ] && [ "$build_folders" = 0 ]; then
    pass "build context: $((context_kb / 1024)) MB, no .build folder (.dockerignore)"
else
    fail "build context: ${context_kb:-?} KB, ${build_folders:-?} .build folders (expected under 50 MB and none)"
fi

build_args=(--format docker --target run --build-arg "DEBIAN_IMAGE=$base_image")
if podman image exists "$swift_image"; then
    say "building the whole Dockerfile ($swift_image is here)"
else
    [ -x "$binary" ] || {
        say "FAIL: no release binary at $binary (swift build -c release --product pushrelay --static-swift-stdlib)"
        exit 1
    }
    say "the build stage's base ($swift_image) cannot be pulled here: the run stage takes CI's release binary"
    say "  $binary (swift build -c release --product pushrelay --static-swift-stdlib, as the build stage runs it)"
    mkdir -p "$work/binary/out"
    cp "$binary" "$work/binary/out/pushrelay"
    tar -C "$work/binary" -cf "$work/binary.tar" out
    previous="$(image_id "$binary_image")"
    podman import "$work/binary.tar" "$binary_image" >/dev/null
    drop_replaced "$binary_image" "$previous"
    build_args+=(--build-arg "BINARY_IMAGE=$binary_image")
fi
build_started=$(date +%s)
previous="$(image_id "$image")"
if podman build "${build_args[@]}" -t "$image" . >"$work/build.log" 2>&1; then
    drop_replaced "$image" "$previous"
    pass "podman build --format docker --target run: $image in $(($(date +%s) - build_started)) s"
else
    tail -n 30 "$work/build.log"
    fail "podman build (see above)"
    exit 1
fi
healthcheck="$(podman image inspect --format '{{json .Config.Healthcheck}}' "$image")"
user="$(podman image inspect --format '{{.Config.User}}' "$image")"
say "image: user $user, healthcheck $healthcheck"

# MARK: - 4. The image's own checks

missing="$(podman run --rm --entrypoint ldd "$image" /usr/local/bin/pushrelay 2>&1 | grep -c 'not found' || true)"
linked="$(podman run --rm --entrypoint ldd "$image" /usr/local/bin/pushrelay 2>&1 | grep -c '=>' || true)"
if [ "$missing" = 0 ] && [ "$linked" -gt 0 ]; then
    pass "ldd in the image resolves all $linked libraries of pushrelay"
else
    podman run --rm --entrypoint ldd "$image" /usr/local/bin/pushrelay | grep 'not found' || true
    fail "ldd in the image: $missing libraries not found"
fi
if podman run --rm "$image" check-config >"$work/check-config.log" 2>&1; then
    pass "pushrelay check-config with the image's own relay.conf"
else
    cat "$work/check-config.log"
    fail "pushrelay check-config"
fi

# MARK: - Helpers for the relays

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# merge_conf BASE FRAGMENT: BASE (a relay.conf) with FRAGMENT's keys set in their sections (a key BASE sets already is
# replaced) and FRAGMENT's other sections added, on standard output: the simulator's fragment merged into the image's
# own relay.conf, which has [apns], [fcm], [expo] and [upstream] sections already.
merge_conf() {
    python3 - "$1" "$2" <<'PY'
import re
import sys

base = open(sys.argv[1]).read().splitlines()
sections, order, current = {}, [], None
for line in open(sys.argv[2]).read().splitlines():
    header = re.match(r"^\[([^\]]+)\]\s*$", line)
    if header:
        current = header.group(1)
        sections.setdefault(current, [])
        order.append(current)
    elif current and re.match(r"^[A-Za-z0-9_]+\s*=", line):
        sections[current].append(line)
keys = {name: {line.split("=")[0].strip() for line in lines} for name, lines in sections.items()}
out, current, seen = [], None, set()
for line in base:
    header = re.match(r"^\[([^\]]+)\]\s*$", line)
    if header:
        current = header.group(1)
        out.append(line)
        if current in sections:
            seen.add(current)
            out.extend(sections[current])
        continue
    key = re.match(r"^([A-Za-z0-9_]+)\s*=", line)
    if key and current in keys and key.group(1) in keys[current]:
        continue
    out.append(line)
for name in dict.fromkeys(order):
    if name not in seen:
        out.extend(["", f"[{name}]"] + sections[name])
print("\n".join(out))
PY
}

# start_simulator HOST DIRECTORY: `pushrelay simulate` on the host (the release binary), listening on HOST on a free
# port, with 1.5 s of latency (so that pushes are in flight when a relay is stopped); sets simulator_port.
start_simulator() {
    local host=$1 directory=$2
    simulator_port="$(free_port)"
    mkdir -p "$directory"
    "$binary" simulate --listen "$host:$simulator_port" --out "$directory/out" --latency-ms 1500 \
        >"$directory/simulator.log" 2>&1 &
    simulator_pids+=($!)
    wait_for 30 test -f "$directory/out/relay.conf.fragment" || {
        cat "$directory/simulator.log"
        fail "pushrelay simulate on $host did not start"
        exit 1
    }
}

# relay_folder FOLDER SIMULATOR: FOLDER/relay.conf (the image's own, container/relay.conf, with the simulator's
# fragment merged in, its files under /etc/pushrelay/simulator) and FOLDER/simulator, owned by the image's user.
relay_folder() {
    local folder=$1 simulator=$2
    mkdir -p "$folder"
    cp -R "$simulator/out" "$folder/simulator"
    sed "s|$simulator/out|/etc/pushrelay/simulator|g" "$simulator/out/relay.conf.fragment" >"$folder/fragment"
    merge_conf container/relay.conf "$folder/fragment" >"$folder/relay.conf"
    rm "$folder/fragment"
    chown -R 10001:10001 "$folder"
}

# post URL KEY BODY [header ...]: the answer's body, then its status on a line of its own.
post() {
    local url=$1 key=$2 body=$3
    shift 3
    curl -sS -w '\n%{http_code}' "$url" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' "$@" \
        -d "$body"
}

# apns_tokens COUNT PREFIX: a JSON array of COUNT APNs device tokens (64 hex digits).
apns_tokens() {
    jq -nc --arg p "$2" --argjson n "$1" '[range($n) | tostring | $p + ("0" * (64 - ($p | length) - length)) + .]'
}

# receipts_final URL KEY IDS_JSON: exits 0 when every id's receipt is there and final ("ok"), printing a summary.
receipts_final() {
    local answer
    answer="$(post "$1/v1/receipts" "$2" "{\"ids\": $3}" | sed '$d')"
    jq -r --argjson ids "$3" \
        '[$ids[] as $id | .data[$id].status // "absent"] | group_by(.) | map("\(length) \(.[0])") | join(", ")' \
        <<<"$answer"
    jq -e --argjson ids "$3" '. as $a | all($ids[]; $a.data[.].status == "ok")' <<<"$answer" >/dev/null
}

# The id of the container's process: "uid gid" (the real ids of its PID 1).
process_ids() {
    podman exec "$1" cat /proc/1/status | awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 } END { print u ":" g }'
}

# MARK: - 5. One relay in a container, SQLite in a volume, the simulator on the host

say "one relay: host network, SQLite in the volume $prefix-data, pushrelay simulate on the host ($(elapsed))"
start_simulator 127.0.0.1 "$work/simulator"
relay_port="$(free_port)"
relay_folder "$work/relay" "$work/simulator"
sed -i "s|^listen = .*|listen = \"127.0.0.1:$relay_port\"|" "$work/relay/relay.conf"
relay="http://127.0.0.1:$relay_port"
podman volume create "$prefix-data" >/dev/null
run_relay() {
    podman run -d --name "$prefix-relay" --network host --stop-timeout 60 \
        -v "$work/relay/relay.conf:/etc/pushrelay/relay.conf:ro" \
        -v "$work/relay/simulator:/etc/pushrelay/simulator:ro" \
        -v "$prefix-data:/var/lib/pushrelay" "$image" >/dev/null 2>"$work/relay/podman-run.log"
}
run_relay
if wait_for 60 curl -fsS "$relay/readyz"; then
    pass "the container answers /healthz ($(curl -sS "$relay/healthz")) and /readyz ($(curl -sS "$relay/readyz"))"
else
    podman logs "$prefix-relay" 2>&1 | tail -n 20
    fail "the container did not answer /readyz within 60 s"
fi
if podman healthcheck run "$prefix-relay" >/dev/null 2>&1; then
    pass "podman healthcheck run (the image's HEALTHCHECK, pushrelay healthcheck) exits 0"
else
    fail "podman healthcheck run exits $?"
fi
ids="$(process_ids "$prefix-relay")"
if [ "$ids" = 10001:10001 ]; then pass "the relay runs as $ids"; else fail "the relay runs as $ids, not 10001:10001"; fi

exec_relay() { podman exec -e PUSHRELAY_ACTOR=container-test "$@"; }
exec_relay "$prefix-relay" pushrelay tenant create acme --allow-critical-alerts >/dev/null
key="$(exec_relay "$prefix-relay" pushrelay key issue --tenant acme | grep '^prk_')"
answer="$(post "$relay/v1/push" "$key" "{\"messages\":[{\"to\":$(apns_tokens 1 ab),\"title\":\"Hello\"}]}")"
status="$(tail -n 1 <<<"$answer")"
ticket="$(sed '$d' <<<"$answer" | jq -c '[.data[0].id]')"
if [ "$status" = 200 ] && [ "$(sed '$d' <<<"$answer" | jq -r '.data[0].status')" = ok ] &&
    summary="$(receipts_final "$relay" "$key" "$ticket")"; then
    pass "a push through the container to the simulator is delivered, its receipt final ($summary)"
else
    fail "a push through the container: $answer"
fi

files="$(podman exec "$prefix-relay" sh -c \
    'cd /var/lib/pushrelay && stat -c "%a %u:%g %n" pushrelay.db pushrelay.db-wal pushrelay.db.journal-key' 2>&1)"
if [ "$(grep -c '^600 10001:10001 ' <<<"$files")" = 3 ]; then
    pass "store, WAL and journal key are 0600 and the relay's: $(tr '\n' ';' <<<"$files")"
else
    fail "store, WAL and journal key: $files"
fi

# SIGTERM with pushes in flight: 50 pushes accepted (respond-async: journaled, every ticket pending), the simulator
# answering each after 1.5 s, then `podman stop` (SIGTERM, the image's STOPSIGNAL) at once.
tokens="$(apns_tokens 50 cd)"
answer="$(post "$relay/v1/push" "$key" "{\"messages\":[{\"to\":$tokens,\"title\":\"Drain\"}]}" -H 'Prefer: respond-async')"
tickets="$(sed '$d' <<<"$answer" | jq -c '[.data[].id]')"
stop_started=$(date +%s)
podman stop -t 60 "$prefix-relay" >/dev/null
stop_seconds=$(($(date +%s) - stop_started))
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$prefix-relay")"
podman logs "$prefix-relay" >"$work/relay/relay-1.log" 2>&1
drain_seconds="$(sed -n 's/^drain_seconds = //p' "$work/relay/relay.conf")"
run_relay_again() {
    podman start "$prefix-relay" >/dev/null
    wait_for 60 curl -fsS "$relay/readyz"
}
if [ "$(tail -n 1 <<<"$answer")" = 202 ] && [ "$(jq length <<<"$tickets")" = 50 ] && [ "$exit_code" = 0 ] &&
    [ "$stop_seconds" -le "$drain_seconds" ] && grep -q 'PushRelay stopped' "$work/relay/relay-1.log" &&
    run_relay_again && summary="$(receipts_final "$relay" "$key" "$tickets")"; then
    pass "SIGTERM with 50 pushes in flight: stopped in ${stop_seconds} s (drain_seconds $drain_seconds), exit 0;" \
        "after a restart on the volume every receipt is final ($summary)"
else
    fail "SIGTERM with pushes in flight: answer $(tail -n 1 <<<"$answer"), stop ${stop_seconds} s, exit $exit_code," \
        "receipts: ${summary:-none} (log: $work/relay/relay-1.log)"
fi
podman rm -f -t 0 "$prefix-relay" >/dev/null
podman volume rm -f "$prefix-data" >/dev/null

# MARK: - 6. The docs' `docker run` lines, through podman

# Port 8080 is the docs' and compose.yaml's; another relay on this machine may hold it for a while.
port_8080_free() { ! (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; }
wait_for 120 port_8080_free || say "port 8080 is taken; the next checks will fail"

# The commands of the first ```sh block of "### 11. In a container", but `docker build` (the image is built above).
docs_commands="$(awk '
    /^### 11\. In a container/ { section = 1; next }
    /^### / { section = 0 }
    section && /^```sh/ && !done { inside = 1; next }
    inside && /^```/ { inside = 0; done = 1; next }
    inside && !/^docker build/ { print }
' Docs/operators.md)"
mkdir -p "$work/docs/secrets"
cp container/relay.conf "$work/docs/relay.conf"
say "the docs' commands (Docs/operators.md, In a container), with docker as podman:"
sed 's/^/container-test:   /' <<<"$docs_commands"
docs_status=0
(
    cd "$work/docs"
    docker() { podman "$@"; }
    # Once the container runs, `docker exec` may come before the relay has opened its store: wait for it first.
    run="$(sed -n '/^docker run/,/[^\\]$/p' <<<"$docs_commands")"
    rest="$(sed '/^docker run/,/[^\\]$/d' <<<"$docs_commands")"
    eval "$run" >/dev/null
    wait_for 60 curl -fsS http://127.0.0.1:8080/readyz
    eval "$rest"
) >"$work/docs/commands.log" 2>&1 || docs_status=$?
if [ "$docs_status" = 0 ] && curl -fsS http://127.0.0.1:8080/readyz >/dev/null &&
    [ "$(podman inspect --format '{{.Config.StopTimeout}}' pushrelay)" = 60 ]; then
    pass "the docs' docker run and docker exec lines work as written (podman): /readyz 200 on :8080, stop timeout 60"
else
    cat "$work/docs/commands.log"
    podman logs pushrelay 2>&1 | tail -n 20
    fail "the docs' docker run lines (exit $docs_status)"
fi
podman rm -f -t 10 pushrelay >/dev/null 2>&1 || true
podman volume rm -f pushrelay-data >/dev/null 2>&1 || true

# MARK: - 7. compose.yaml with PostgreSQL

# The official postgres image cannot be pulled here: Debian's PostgreSQL 15 on the same base, with an entrypoint
# that honours the official image's POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB and keeps its data in
# /var/lib/postgresql/data; pg_isready on PATH for the health check. compose.yaml takes it through POSTGRES_IMAGE.
# Built every run: podman's layer cache makes it take seconds once the package layer is there.
{
    mkdir -p "$work/postgres"
    cat >"$work/postgres/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/password
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/password --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/password
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    [ "$POSTGRES_DB" = postgres ] || createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
EOF
    chmod 0755 "$work/postgres/docker-entrypoint.sh"
    cat >"$work/postgres/Dockerfile" <<EOF
FROM $base_image
RUN mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf \\
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \\
    && rm -rf /var/lib/apt/lists/* \\
    && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \\
    && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:\$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
EOF
    previous="$(image_id "$postgres_image")"
    podman build --format docker -t "$postgres_image" "$work/postgres" >"$work/postgres/build.log" 2>&1 || {
        tail -n 20 "$work/postgres/build.log"
        fail "building the local PostgreSQL image"
        exit 1
    }
    drop_replaced "$postgres_image" "$previous"
}
say "PostgreSQL image $postgres_image ready ($(elapsed))"

# Docs/operators.md shows compose.yaml: the services and volumes it shows are the file's.
shown="$(awk '/^With PostgreSQL, \[deploy\/compose.yaml\]/ { found = 1 } found && /^```yaml/ { inside = 1; next }
    inside && /^```/ { exit } inside { print }' Docs/operators.md)"
if [ -n "$shown" ] && [ "$shown" = "$(sed -n '/^services:/,$p' deploy/compose.yaml)" ]; then
    pass "Docs/operators.md shows deploy/compose.yaml as it is"
else
    fail "Docs/operators.md's compose.yaml differs from deploy/compose.yaml"
fi

# The folder compose.yaml asks for: itself, relay.conf (the image's, pointed at db as its comment says), the key.
mkdir -p "$compose_dir/secrets"
cp deploy/compose.yaml "$compose_dir/compose.yaml"
sed -e 's|^url = .*|url = "postgres://pushrelay:pushrelay@db:5432/pushrelay?sslmode=disable"|' \
    -e 's|^# journal_key_file = .*|journal_key_file = "secrets/journal.key"|' container/relay.conf >"$compose_dir/relay.conf"
(umask 077 && openssl rand -base64 32 >"$compose_dir/secrets/journal.key")
chown -R 10001:10001 "$compose_dir/secrets"
export POSTGRES_IMAGE="$postgres_image"
compose() { (cd "$compose_dir" && podman-compose "$@") >>"$work/compose.log" 2>&1; }
compose_container() {
    podman ps -a --filter "label=com.docker.compose.project=$compose_project" --filter "label=com.docker.compose.service=$1" \
        --format '{{.Names}}' | head -n 1
}
store_waits() { podman logs "$1" 2>&1 | grep -c 'Waiting for the store' || true; }

compose_started=$(date +%s)
compose up -d
if wait_for 180 curl -fsS http://127.0.0.1:8080/readyz; then
    relay_container="$(compose_container relay)"
    db_container="$(compose_container db)"
    pass "compose.yaml as is (podman-compose up -d): ready in $(($(date +%s) - compose_started)) s," \
        "after $(store_waits "$relay_container") waits for the database"
else
    tail -n 30 "$work/compose.log"
    podman logs "$(compose_container relay)" 2>&1 | tail -n 20
    fail "compose.yaml: the relay was not ready within 180 s"
fi
relay_container="$(compose_container relay)"
db_container="$(compose_container db)"
exec_relay "$relay_container" pushrelay tenant create compose-acme >/dev/null 2>&1 || true
# -t 60: podman-compose 1.0.3 ignores stop_grace_period, and its `down` would wait 1 s before SIGKILL.
compose down -t 60
compose up -d
if wait_for 120 curl -fsS http://127.0.0.1:8080/readyz &&
    exec_relay "$(compose_container relay)" pushrelay tenant show compose-acme >/dev/null 2>&1; then
    pass "a tenant made before podman-compose down is there after up"
else
    fail "the tenant did not survive podman-compose down and up"
fi

# The database 30 s late: both stopped, the relay started alone, the database 30 s later.
relay_container="$(compose_container relay)"
db_container="$(compose_container db)"
compose stop -t 60
podman start "$relay_container" >/dev/null
sleep 30
running="$(podman inspect --format '{{.State.Status}}' "$relay_container")"
waits="$(store_waits "$relay_container")"
podman start "$db_container" >/dev/null
db_started=$(date +%s)
if wait_for 150 curl -fsS http://127.0.0.1:8080/readyz; then
    pass "the database 30 s late: the relay waited ($waits waits logged, $running) and was ready" \
        "$(($(date +%s) - db_started)) s after the database started"
else
    podman logs "$relay_container" 2>&1 | tail -n 20
    fail "the database 30 s late: the relay was not ready 150 s after the database started ($running, $waits waits)"
fi

# SIGTERM while a relay waits for its database ends it at once, with 143: as PID 1 it would otherwise ignore the
# signal, and `docker stop` wait for its SIGKILL.
podman run -d --name "$prefix-waiting" -v "$compose_dir/secrets:/etc/pushrelay/secrets:ro" \
    -e PUSHRELAY_STORE_URL=postgres://pushrelay:pushrelay@db.invalid:5432/pushrelay \
    -e PUSHRELAY_STORE_JOURNAL_KEY_FILE=secrets/journal.key "$image" >/dev/null 2>&1
waiting() { podman logs "$prefix-waiting" 2>&1 | grep -q 'Waiting for the store'; }
wait_for 30 waiting || true
stop_started=$(date +%s)
podman stop -t 30 "$prefix-waiting" >/dev/null 2>&1 || true
stop_seconds=$(($(date +%s) - stop_started))
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$prefix-waiting")"
if waiting && [ "$exit_code" = 143 ] && [ "$stop_seconds" -lt 30 ]; then
    pass "SIGTERM while the relay waits for its database: stopped in ${stop_seconds} s, exit 143"
else
    fail "SIGTERM while the relay waits for its database: exit $exit_code after ${stop_seconds} s (30 s: killed)"
fi
podman rm -f -v -t 0 "$prefix-waiting" >/dev/null 2>&1 || true

# MARK: - 8. Two replicas on one PostgreSQL (issue 39 item 5)

# Two containers of the image on compose's database and network, each with the image's own relay.conf and its
# `[audit] instance = "auto"` (only the store and the simulator's sections set), behind their own ports; the simulator
# listens on the network's gateway, which its certificate names. Each derives its own instance id.
if [ -z "$db_container" ] || ! curl -fsS http://127.0.0.1:8080/readyz >/dev/null 2>&1; then
    fail "two replicas on one PostgreSQL: not tried, compose's database is not up"
    exit 1
fi
network="$(podman inspect --format '{{range $name, $n := .NetworkSettings.Networks}}{{$name}} {{end}}' \
    "$db_container" | awk '{ print $1 }')"
gateway="$(podman network inspect --format '{{range .Subnets}}{{.Gateway}} {{end}}' "$network" | awk '{ print $1 }')"
start_simulator "$gateway" "$work/simulator-2"
relay_folder "$work/replicas" "$work/simulator-2"
sed -i -e 's|^url = .*|url = "postgres://pushrelay:pushrelay@db:5432/pushrelay?sslmode=disable"|' \
    -e 's|^# journal_key_file = .*|journal_key_file = "secrets/journal.key"|' "$work/replicas/relay.conf"
key_replicas="$(exec_relay "$(compose_container relay)" pushrelay key issue --tenant compose-acme 2>&1 | grep '^prk_' ||
    true)"
replica_ports=("$(free_port)" "$(free_port)")
for n in 1 2; do
    podman run -d --name "$prefix-replica-$n" --network "$network" -p "127.0.0.1:${replica_ports[$((n - 1))]}:8080" \
        -v "$work/replicas/relay.conf:/etc/pushrelay/relay.conf:ro" \
        -v "$work/replicas/simulator:/etc/pushrelay/simulator:ro" \
        -v "$compose_dir/secrets:/etc/pushrelay/secrets:ro" "$image" >/dev/null 2>>"$work/replicas/podman-run.log"
done
replicas_ready() {
    curl -fsS "http://127.0.0.1:${replica_ports[0]}/readyz" && curl -fsS "http://127.0.0.1:${replica_ports[1]}/readyz"
}
if wait_for 90 replicas_ready; then
    instances=()
    for n in 1 2; do
        instances+=("$(podman logs "$prefix-replica-$n" 2>&1 | grep -o 'relay.audit=audit chain [^ ]*' |
            awk '{ print $3 }' | head -n 1)")
    done
    say "replicas ready: ${instances[*]}"
    codes=""
    tickets="[]"
    for round in 1 2 3 4 5; do
        for n in 0 1; do
            answer="$(post "http://127.0.0.1:${replica_ports[$n]}/v1/push" "$key_replicas" \
                "{\"messages\":[{\"to\":$(apns_tokens 10 "e${round}${n}"),\"title\":\"Replica\"}]}")"
            code="$(tail -n 1 <<<"$answer")"
            codes+="$code "
            if [ "$code" = 200 ]; then
                tickets="$(jq -c --argjson more "$(sed '$d' <<<"$answer" | jq -c '[.data[].id]')" '. + $more' \
                    <<<"$tickets")"
            else
                say "replica $((n + 1)) answered $code: $(sed '$d' <<<"$answer" | head -c 300)"
            fi
        done
    done
    # A third relay given replica 1's id while it runs refuses to start.
    duplicate_status=0
    podman run --rm --network "$network" -e "PUSHRELAY_AUDIT_INSTANCE=${instances[0]}" \
        -v "$work/replicas/relay.conf:/etc/pushrelay/relay.conf:ro" \
        -v "$work/replicas/simulator:/etc/pushrelay/simulator:ro" -v "$compose_dir/secrets:/etc/pushrelay/secrets:ro" \
        "$image" >"$work/replicas/duplicate.log" 2>&1 || duplicate_status=$?
    if [ "$duplicate_status" = 1 ] && grep -q 'Another relay runs with this instance id' "$work/replicas/duplicate.log"; then
        pass "a third relay with replica 1's id (${instances[0]}) refuses to start: exit 1, 'Another relay runs with" \
            "this instance id'"
    else
        tail -n 5 "$work/replicas/duplicate.log"
        fail "a third relay with replica 1's id: exit $duplicate_status"
    fi
    errors="$(tr ' ' '\n' <<<"$codes" | grep -c '^5' || true)"
    summary="$(receipts_final "http://127.0.0.1:${replica_ports[0]}" "$key_replicas" "$tickets")" && final=yes ||
        final=no
    for n in 1 2; do podman stop -t 60 "$prefix-replica-$n" >/dev/null; done
    verify="$(podman run --rm --network "$network" -v "$work/replicas/relay.conf:/etc/pushrelay/relay.conf:ro" \
        -v "$work/replicas/simulator:/etc/pushrelay/simulator:ro" -v "$compose_dir/secrets:/etc/pushrelay/secrets:ro" \
        "$image" audit verify 2>&1 | grep -v 'unable to get systemd connection')" && verified=yes || verified=no
    echo "$verify" >"$work/replicas/audit-verify.log"
    say "pushrelay audit verify (in a third container on the same database):"
    sed 's/^/container-test:   /' <<<"$verify"
    chains=0
    for id in "${instances[@]}"; do
        if [ -n "$id" ] && grep -F "$id" <<<"$verify" | grep -qiv 'not intact'; then chains=$((chains + 1)); fi
    done
    accepted="$(tr ' ' '\n' <<<"$codes" | grep -c '^200$' || true)"
    if [ "$accepted" = 10 ] && [ "$(jq length <<<"$tickets")" = 100 ] && [ "$errors" = 0 ] && [ "$final" = yes ] &&
        [ "$verified" = yes ] && [ "$chains" = 2 ] &&
        [ "${instances[0]}" != "${instances[1]}" ]; then
        pass "two replicas (instance auto: ${instances[*]}) on one PostgreSQL: 10 requests of 10 pushes, all 200" \
            "(0 5xx), every receipt final ($summary), audit verify: their two chains intact"
    else
        cat "$work/replicas/audit-verify.log"
        fail "two replicas: statuses $codes, receipts $summary, audit verify $verified, chains found $chains," \
            "instances ${instances[*]}"
    fi
else
    for n in 1 2; do podman logs "$prefix-replica-$n" 2>&1 | tail -n 10; done
    fail "two replicas on one PostgreSQL: not both ready within 90 s"
fi

# MARK: - The end

say "done in $(elapsed) (podman build of the run stage included, the release build not)"
if [ "$failures" -gt 0 ]; then
    say "$failures check(s) FAILED"
    exit 1
fi
say "every check passed"
