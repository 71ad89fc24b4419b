#!/usr/bin/env bash
# Prepares a Temporal server on PostgreSQL for gns3-copilot, in two steps that run.sh and
# docker-compose.yml both use:
#
#   setup.sh schema      before the server starts: creates its two databases when missing and
#                        brings their schemas to the version the server expects, with the
#                        server's own SQL tool (temporal-sql-tool)
#   setup.sh namespace   once the server answers: creates the namespace and registers the
#                        search attributes chat turns and configuration jobs carry, then waits
#                        until the frontend accepts queries on them
#
# Both steps can run again on a prepared server: they only add what is missing.
#
# Environment (defaults in brackets): TEMPORAL_PG_HOST [127.0.0.1], TEMPORAL_PG_PORT [5432],
# TEMPORAL_PG_USER [postgres], TEMPORAL_PG_PASSWORD [], TEMPORAL_DB [temporal],
# TEMPORAL_VISIBILITY_DB [temporal_visibility], TEMPORAL_SQL_TOOL [temporal-sql-tool],
# TEMPORAL_SCHEMA_DIR (schema/postgresql/v12 of the server's source, or the admin-tools image's
# /etc/temporal/schema/postgresql/v12), TEMPORAL_CLI [temporal], TEMPORAL_ADDRESS
# [127.0.0.1:7233], TEMPORAL_NAMESPACE [default], TEMPORAL_RETENTION [72h].
set -euo pipefail

# What chat turns and configuration jobs set (temporaldev.SearchAttributes; a test keeps the
# two lists equal).
SEARCH_ATTRIBUTES="ProjectId SessionId UserId ToolName"

pg_host=${TEMPORAL_PG_HOST:-127.0.0.1}
pg_port=${TEMPORAL_PG_PORT:-5432}
pg_user=${TEMPORAL_PG_USER:-postgres}
pg_password=${TEMPORAL_PG_PASSWORD:-}
sql_tool=${TEMPORAL_SQL_TOOL:-temporal-sql-tool}
cli=${TEMPORAL_CLI:-temporal}
address=${TEMPORAL_ADDRESS:-127.0.0.1:7233}
namespace=${TEMPORAL_NAMESPACE:-default}

sql() {
  "$sql_tool" --plugin postgres12 --endpoint "$pg_host" --port "$pg_port" --user "$pg_user" \
    --password "$pg_password" "$@"
}

# schema_of DATABASE KIND: KIND is temporal or visibility, the folder of its versioned schema.
schema_of() {
  local db=$1 kind=$2 out
  if ! out=$(sql --database "$db" create-database 2>&1); then
    # The tool has no "if not exists"; an existing database is what a second run finds.
    if ! grep -q "already exists" <<<"$out"; then
      echo "$out" >&2
      echo "setup.sh: could not create the database $db on $pg_host:$pg_port" >&2
      return 1
    fi
  fi
  # Version 0.0 creates only the schema_version bookkeeping (idempotent); update-schema then
  # applies every versioned step the database has not had yet. The tool logs each statement:
  # shown only when it fails.
  if ! out=$(sql --database "$db" setup-schema -v 0.0 2>&1 &&
    sql --database "$db" update-schema -d "$TEMPORAL_SCHEMA_DIR/$kind/versioned" 2>&1); then
    echo "$out" >&2
    echo "setup.sh: could not set the $kind schema up in $db" >&2
    return 1
  fi
  echo "setup.sh: $db has the $kind schema"
}

schema() {
  : "${TEMPORAL_SCHEMA_DIR:?set TEMPORAL_SCHEMA_DIR to schema/postgresql/v12 of the server source}"
  if [ ! -d "$TEMPORAL_SCHEMA_DIR/temporal/versioned" ]; then
    echo "setup.sh: $TEMPORAL_SCHEMA_DIR has no temporal/versioned schema" >&2
    return 1
  fi
  schema_of "${TEMPORAL_DB:-temporal}" temporal
  schema_of "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}" visibility
}

# until_ok SECONDS WHAT COMMAND...: runs COMMAND every half second until it succeeds.
until_ok() {
  local seconds=$1 what=$2 deadline out
  shift 2
  deadline=$((SECONDS + seconds))
  until out=$("$@" 2>&1); do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "$out" >&2
      echo "setup.sh: $what within ${seconds}s" >&2
      return 1
    fi
    sleep 0.5
  done
}

namespace() {
  local t=("$cli" --address "$address")
  until_ok 120 "no Temporal server answered at $address" "${t[@]}" operator cluster health
  if ! "${t[@]}" operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
    "${t[@]}" operator namespace create --namespace "$namespace" --retention "${TEMPORAL_RETENTION:-72h}" >/dev/null
  fi
  # The frontend learns of a new namespace on its next cache refresh (about 10 s).
  until_ok 60 "the namespace $namespace did not become usable" \
    "${t[@]}" operator search-attribute list --namespace "$namespace"
  local have a query=""
  have=$("${t[@]}" operator search-attribute list --namespace "$namespace")
  for a in $SEARCH_ATTRIBUTES; do
    if ! grep -qw "$a" <<<"$have"; then
      "${t[@]}" operator search-attribute create --namespace "$namespace" --name "$a" --type Keyword >/dev/null
    fi
    query+="${query:+ AND }$a = 'setup-check'"
  done
  # A turn started before the frontend knows the attributes would run unsearchable.
  until_ok 60 "the search attributes ($SEARCH_ATTRIBUTES) were not accepted in queries" \
    "${t[@]}" workflow count --namespace "$namespace" --query "$query"
  echo "setup.sh: namespace $namespace on $address has the search attributes $SEARCH_ATTRIBUTES"
}

case "${1:-}" in
  schema) schema ;;
  namespace) namespace ;;
  *) echo "usage: $0 schema|namespace" >&2; exit 2 ;;
esac
