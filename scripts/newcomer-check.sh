#!/usr/bin/env bash
# Walks the newcomer's path of issue 15 and checks each point that can be checked on this
# machine.
#
#   scripts/newcomer-check.sh --quick   the cheap part CI runs: the Go and C compiler checks,
#                                       the flag table (docs/configuration.md), the install script's PATH note
#                                       and its fallback from the release archive to a source build
#   scripts/newcomer-check.sh           all of it: a fresh clone of HEAD with an empty GOPATH
#                                       (set with `go env -w`, as point 4 found it), module cache
#                                       and build cache; `make run` until the page answers, then
#                                       Ctrl-C; then `make test` on a few packages with Redis
#                                       unreachable and a PostgreSQL database that does not exist
#                                       yet. Slow: about 10 minutes of both cores. It prints the
#                                       time of each step.
#
# Set NEWCOMER_TEST_PKGS=./... to run the whole `make test` in the fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

step() { echo "== newcomer-check: $*"; }
fail() { echo "newcomer-check: FAILED: $*" >&2; exit 1; }

quick() {
	step "point 1-2: Go >= $(awk '$1 == "go" { print $2; exit }' go.mod) and a C compiler"
	scripts/check-toolchain.sh
	step "points 1-3, 9 and issue 13 §6: the check's messages, the flag table, the PATH note, the release fallback"
	go test -count=1 -run 'TestToolchainCheck|TestInstall|TestREADMEConfigTable' ./scripts/ ./cmd/gns3-copilot/
}

if [ "${1:-}" = "--quick" ]; then
	quick
	exit 0
fi

secs() { echo $(($(date +%s) - $1)); }

work=$(mktemp -d)
serve_group=
cleanup() {
	if [ -n "$serve_group" ]; then kill -INT -- "-$serve_group" 2>/dev/null || true; fi
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

step "fresh clone of HEAD in $work with empty GOPATH, module cache and build cache"
git clone --quiet "$repo" "$work/repo"
cd "$work/repo"
export GOENV="$work/goenv" GOCACHE="$work/gocache" GOFLAGS=-modcacherw
unset GOPATH GOMODCACHE GOBIN
# Point 4: a GOPATH set with `go env -w` is in go's config file, not in the environment.
go env -w GOPATH="$work/gopath"
[ "$(go env GOPATH)" = "$work/gopath" ] || fail "go env -w GOPATH did not take"
# A newcomer has no Temporal CLI: without this, one already on PATH (this machine's) would be
# used and the install the first run pays for would never be timed.
newpath=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -x "$d/temporal" ] || newpath="${newpath:+$newpath:}$d"
done
export PATH="$newpath"
! command -v temporal >/dev/null || fail "a temporal CLI is still on PATH: $(command -v temporal)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 18088)
export GNS3_COPILOT_LISTEN="127.0.0.1:$port"
step "make run (the page on http://$GNS3_COPILOT_LISTEN/)"
began=$(date +%s)
setsid make run >"$work/run.log" 2>&1 &
serve_group=$!
until curl -fsS -o /dev/null "http://$GNS3_COPILOT_LISTEN/" 2>/dev/null; do
	kill -0 "$serve_group" 2>/dev/null || { cat "$work/run.log"; fail "make run exited before the page answered"; }
	[ "$(secs "$began")" -lt 1800 ] || { cat "$work/run.log"; fail "the page did not answer within 30 minutes"; }
	sleep 2
done
run_secs=$(secs "$began")
step "the page answered after ${run_secs} s"
grep -q "building gns3-copilot: a first build" "$work/run.log" || fail "point 8: make run did not say what the first build costs"
grep -qE "temporal 1\.5\.1 is installed" "$work/run.log" || fail "the Temporal CLI was not installed"
if grep -q "from source instead" "$work/run.log"; then
	grep -q "about 6 minutes on 2 cores" "$work/run.log" || fail "point 8: the source build did not say what it costs"
fi
grep -q "binds 127.0.0.1 only" "$work/run.log" || fail "point 10: no line saying what the dev server binds"
grep -q "temporal CLI not found" "$work/run.log" && fail "point 4: serve did not find the CLI in \$(go env GOPATH)/bin"
devpid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' data/temporal-dev.pid)

step "Ctrl-C"
kill -INT -- "-$serve_group"
for _ in $(seq 1 150); do kill -0 "$serve_group" 2>/dev/null || break; sleep 0.2; done
kill -0 "$serve_group" 2>/dev/null && fail "make run did not stop on Ctrl-C"
serve_group=
[ -n "$devpid" ] && kill -0 "$devpid" 2>/dev/null && fail "the dev server (pid $devpid) outlived Ctrl-C"

# After make run, so that make run is timed on empty caches as a newcomer meets it.
quick

pkgs=${NEWCOMER_TEST_PKGS:-./models ./internal/credentials ./cmd/... ./scripts/testsummary}
db="gns3copilot_newcomer_$$"
step "make test on $pkgs, Redis unreachable, PostgreSQL database $db missing"
began=$(date +%s)
set +e
GNS3COPILOT_TEST_REDIS_ADDR=127.0.0.1:1 \
	GNS3COPILOT_TEST_POSTGRES_DSN="host=127.0.0.1 user=postgres dbname=$db sslmode=disable connect_timeout=3" \
	make test TEST_PKGS="$pkgs" >"$work/test.log" 2>&1
rc=$?
set -e
test_secs=$(secs "$began")
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
tail -n 5 "$work/test.log"
[ $rc -eq 0 ] || fail "make test failed (see above)"
grep -qE "^testsummary: [0-9]+ tests skipped .*Redis at 127.0.0.1:1" "$work/test.log" || fail "point 7: no line counting the skipped tests"
grep -q "PostgreSQL (" "$work/test.log" && fail "point 6: tests skipped for PostgreSQL: the test kit did not create its database"

step "passed: make run answered after ${run_secs} s, make test ($pkgs) took ${test_secs} s"
