#!/usr/bin/env bash
# Starts a local PostgreSQL for PushRelay's tests and prints its URL on stdout (everything else goes to stderr).
#
# Usage: scripts/postgres.sh          e.g. export RELAY_TEST_POSTGRES_URL="$(scripts/postgres.sh)"
#
# Idempotent: installs the `postgresql` package if missing (through scripts/bootstrap.sh: root or sudo), starts the
# Debian cluster (PostgreSQL 15 on Debian 12) listening on 127.0.0.1, creates the role `pushrelay` (password
# `pushrelay`, a test-only credential: the cluster listens on loopback only) and its database `pushrelay_test`, and
# waits until the server accepts connections. Running it again changes nothing and prints the same URL.
#
# Without postgresql-common (pg_lsclusters), it initialises a cluster in $PUSHRELAY_PG_DATA instead.
#
# Exits non-zero, with the reason on stderr, when PostgreSQL cannot be installed or started: the test suite must
# not silently run without it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

role=pushrelay
password=pushrelay
database=pushrelay_test
port="${PUSHRELAY_PG_PORT:-5432}"
data="${PUSHRELAY_PG_DATA:-/var/tmp/pushrelay-postgres}"

say() { echo "postgres: $*" >&2; }
fail() {
    say "$*"
    exit 1
}

./scripts/bootstrap.sh postgresql >&2 || fail "cannot install PostgreSQL (see above); it needs root or sudo"

url="postgres://$role:$password@127.0.0.1:$port/$database?sslmode=disable"
# Already running and prepared (a second run, or a developer's own cluster): nothing to do, and no privileges needed.
if PGPASSWORD="$password" PGCONNECT_TIMEOUT=5 psql --no-psqlrc --quiet --tuples-only --host 127.0.0.1 --port "$port" \
    --username "$role" --dbname "$database" --command "SELECT 1" >/dev/null 2>&1; then
    say "ready on 127.0.0.1:$port"
    echo "$url"
    exit 0
fi

# The server runs as the `postgres` system user, which the package creates.
if [ "$(id -un)" = postgres ]; then
    as_postgres=()
elif [ "$(id -u)" -eq 0 ]; then
    as_postgres=(runuser -u postgres --)
elif command -v sudo >/dev/null 2>&1; then
    as_postgres=(sudo -u postgres --)
else
    fail "starting PostgreSQL needs root, sudo or the postgres user"
fi
pg() { ${as_postgres[@]+"${as_postgres[@]}"} "$@"; }

# The newest installed server version (15 on Debian 12).
version=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -n | tail -n 1)
[ -n "$version" ] || fail "no PostgreSQL server binaries under /usr/lib/postgresql"
bin="/usr/lib/postgresql/$version/bin"

if command -v pg_lsclusters >/dev/null 2>&1; then
    socket_dir=/var/run/postgresql
    # Debian's postgresql-common: a cluster "main" made by the package, or made here if the package skipped it.
    if ! pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main"' | grep -q .; then
        say "creating cluster $version/main on port $port"
        pg pg_createcluster "$version" main --port "$port" >&2
    fi
    port=$(pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
    status=$(pg_lsclusters --no-header | awk -v v="$version" '$1 == v && $2 == "main" { print $4 }')
    if [ "$status" != online ]; then
        say "starting cluster $version/main (port $port)"
        # As the cluster's owner, so that it also works without systemd (containers, CI).
        pg pg_ctlcluster "$version" main start >&2 || fail "pg_ctlcluster $version main start failed"
    fi
else
    socket_dir=/tmp
    if [ ! -f "$data/PG_VERSION" ]; then
        say "initialising a cluster in $data"
        mkdir -p "$data"
        [ "$(id -u)" -ne 0 ] || chown postgres: "$data"
        pg "$bin/initdb" --pgdata "$data" --auth-local peer --auth-host scram-sha-256 >&2
    fi
    if ! pg "$bin/pg_ctl" --pgdata "$data" status >/dev/null 2>&1; then
        say "starting the cluster in $data (port $port)"
        pg "$bin/pg_ctl" --pgdata "$data" --log "$data/server.log" --wait \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$socket_dir" start >&2 \
            || fail "pg_ctl start failed; see $data/server.log"
    fi
fi

# Polling is right here: the server gives no other signal that it is ready.
for _ in $(seq 1 60); do
    if "$bin/pg_isready" --quiet --host 127.0.0.1 --port "$port"; then break; fi
    sleep 0.5
done
"$bin/pg_isready" --quiet --host 127.0.0.1 --port "$port" || fail "PostgreSQL does not accept connections on 127.0.0.1:$port"

# The superuser connects over the cluster's Unix socket (peer authentication).
psql_admin() { pg "$bin/psql" --host "$socket_dir" --port "$port" --dbname postgres --no-psqlrc --quiet --tuples-only \
    --no-align --set ON_ERROR_STOP=1 "$@"; }

if [ "$(psql_admin --command "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != 1 ]; then
    say "creating role $role"
    psql_admin --command "CREATE ROLE $role LOGIN PASSWORD '$password'" >&2
fi
if [ "$(psql_admin --command "SELECT 1 FROM pg_database WHERE datname = '$database'")" != 1 ]; then
    say "creating database $database"
    psql_admin --command "CREATE DATABASE $database OWNER $role" >&2
fi

say "ready on 127.0.0.1:$port"
echo "postgres://$role:$password@127.0.0.1:$port/$database?sslmode=disable"
