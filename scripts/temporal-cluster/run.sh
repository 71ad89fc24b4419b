#!/usr/bin/env bash
# make cluster-load: the scaled-out layout on a real Temporal server, measured against the
# embedded default in the same minutes.
#
# It builds the Temporal server and its SQL tool from the Go module proxy (this folder's own
# go.mod, the version the pinned Temporal CLI embeds; a cold build takes about 20 minutes of
# both cores, later ones seconds), creates fresh databases on the local PostgreSQL, sets their
# schemas up with the server's SQL tool, starts the server (config/cluster.yaml: all services in
# one process, several history shards, 127.0.0.1 only), registers the namespace and the search
# attributes, and runs BenchmarkScaledOutTurns for each burst size: `serve` on its embedded
# defaults, then 2 `api` + 2 `worker` processes on that server with Redis and PostgreSQL.
# Everything it starts is stopped by PID when it ends; the databases are dropped unless
# CLUSTER_KEEP_DBS=1.
#
# Environment: LOAD_TURNS_LIST ["100 300"] burst sizes; LOAD_ROUNDS [1] how many times each
# layout runs per size, alternating; LOAD_BIN a gns3-copilot binary built beforehand;
# PGHOST/PGPORT/PGUSER/PGPASSWORD [127.0.0.1/5432/postgres/none] the PostgreSQL both use;
# CLUSTER_REDIS_URL [redis://127.0.0.1:6379/13]; CLUSTER_DB_PREFIX [gns3cluster] names the
# databases <prefix>_temporal, <prefix>_temporal_visibility and <prefix>_copilot, dropped first
# if they exist; TEMPORAL_HISTORY_SHARDS [4].
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/bin/temporal-cluster
work=$root/.data/temporal-cluster
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
prefix=${CLUSTER_DB_PREFIX:-gns3cluster}
temporal_db=${prefix}_temporal
visibility_db=${prefix}_temporal_visibility
copilot_db=${prefix}_copilot
redis_url=${CLUSTER_REDIS_URL:-redis://127.0.0.1:6379/13}

for tool in go psql createdb dropdb pg_isready; do
  if ! command -v "$tool" >/dev/null; then
    echo "cluster-load: $tool is missing (go from go.dev; psql, createdb, dropdb and pg_isready from postgresql-client)" >&2
    exit 1
  fi
done
cli=$(command -v temporal || true)
[ -n "$cli" ] || cli=$(go env GOPATH)/bin/temporal
if [ ! -x "$cli" ]; then
  echo "cluster-load: the Temporal CLI is missing; make temporal installs it" >&2
  exit 1
fi
if ! pg_isready -q; then
  echo "cluster-load: no PostgreSQL answers at $PGHOST:$PGPORT (set PGHOST, PGPORT, PGUSER, PGPASSWORD)" >&2
  exit 1
fi

echo "== building the Temporal server and temporal-sql-tool (go.temporal.io/server, see $here/go.mod; cold: ~20 minutes)"
mkdir -p "$bin"
(
  cd "$here"
  nice -n 10 go build -o "$bin/temporal-server" go.temporal.io/server/cmd/server
  nice -n 10 go build -o "$bin/temporal-sql-tool" go.temporal.io/server/cmd/tools/sql
)
server_dir=$(cd "$here" && go list -m -f '{{.Dir}}' go.temporal.io/server)

# port_free PORT: nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The server takes its frontend port, ports beside it, and membership ports 300 below.
port=${TEMPORAL_PORT:-17233}
while :; do
  ok=1
  for d in 0 1 2 6 10 -300 -299 -298 -294; do
    port_free $((port + d)) || { ok=0; break; }
  done
  [ "$ok" = 1 ] && break
  port=$((port + 20))
done

drop_dbs() {
  for db in "$temporal_db" "$visibility_db" "$copilot_db"; do
    PGOPTIONS="-c client_min_messages=warning" dropdb --if-exists --force "$db"
  done
}

server_pid=
cleanup() {
  local rc=$?
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    # The server drains its shards on SIGTERM; a few seconds are enough when nothing runs.
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "${CLUSTER_KEEP_DBS:-}" = 1 ]; then
    echo "cluster-load: kept the databases $temporal_db, $visibility_db and $copilot_db"
  else
    drop_dbs || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== fresh databases $temporal_db, $visibility_db, $copilot_db on $PGHOST:$PGPORT"
drop_dbs
createdb "$copilot_db"
export TEMPORAL_PG_HOST=$PGHOST TEMPORAL_PG_PORT=$PGPORT TEMPORAL_PG_USER=$PGUSER TEMPORAL_PG_PASSWORD=${PGPASSWORD:-}
export TEMPORAL_DB=$temporal_db TEMPORAL_VISIBILITY_DB=$visibility_db
export TEMPORAL_SQL_TOOL=$bin/temporal-sql-tool TEMPORAL_SCHEMA_DIR=$server_dir/schema/postgresql/v12
"$here/setup.sh" schema

rm -rf "$work" && mkdir -p "$work"
export TEMPORAL_PORT=$port TEMPORAL_BIND_IP=127.0.0.1 TEMPORAL_DYNAMIC_CONFIG=$here/config/dynamicconfig.yaml
echo "== Temporal server on 127.0.0.1:$port (log: $work/temporal-server.log)"
"$bin/temporal-server" --root "$here" --config config --env cluster --allow-no-auth start \
  >"$work/temporal-server.log" 2>&1 &
server_pid=$!
TEMPORAL_CLI=$cli TEMPORAL_ADDRESS=127.0.0.1:$port "$here/setup.sh" namespace

cd "$root"
go test -c -o "$work/e2e.test" ./e2e
if [ -z "${LOAD_BIN:-}" ]; then
  go build -o "$work/gns3-copilot" ./cmd/gns3-copilot
  export LOAD_BIN=$work/gns3-copilot
fi
for turns in ${LOAD_TURNS_LIST:-100 300}; do
  # One round is serve then the cluster; rounds alternate the two (go test -count would run
  # each layout's rounds back to back).
  for round in $(seq 1 "${LOAD_ROUNDS:-1}"); do
    echo "== $turns simultaneous turns, round $round: serve (embedded defaults), then 2 api + 2 worker on the Temporal server"
    (cd e2e && LOAD_TURNS=$turns LOAD_TEMPORAL=127.0.0.1:$port LOAD_TEMPORAL_PID=$server_pid \
      LOAD_REDIS_URL=$redis_url LOAD_DATABASE_URL="postgres://$PGUSER${PGPASSWORD:+:$PGPASSWORD}@$PGHOST:$PGPORT/$copilot_db?sslmode=disable" \
      "$work/e2e.test" -test.run '^$' -test.bench ScaledOutTurns -test.benchtime 1x -test.timeout 60m)
  done
done
