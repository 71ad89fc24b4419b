#!/usr/bin/env bash
# Runs every Go fuzz target of the main module, one after the other (Go fuzzes one target per
# invocation), each for FUZZTIME, and prints per target the executions, the new interesting
# inputs (new coverage) and whether it failed. `make fuzz` runs it for a campaign, and `make
# test` under CI=true for a few seconds per target.
#
#   scripts/fuzz.sh [TARGET_REGEXP]       e.g. scripts/fuzz.sh '^(FuzzCapture|FuzzBGP)$'
#
# FUZZTIME        how long each target runs (go test -fuzztime; default 3m)
# FUZZPARALLEL    fuzzing workers per target (default 1: the machine is shared)
# FUZZMINIMIZE    go test -fuzzminimizetime (default 500x: Go's 60 s default minimizes every
#                 new interesting input for up to a minute, which stalls a target whose inputs
#                 are pcaps or transcripts of kilobytes)
# FUZZLOGS        directory for each target's full go test output (default: a temporary one)
#
# A crash or a hang leaves its input under the package's testdata/fuzz/FuzzX/, where plain
# `go test` replays it from then on; the script exits non-zero after running every target.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3m}
FUZZPARALLEL=${FUZZPARALLEL:-1}
FUZZMINIMIZE=${FUZZMINIMIZE:-500x}
# Logs of a run that made its own directory go with it when every target passed.
if [ -z "${FUZZLOGS:-}" ]; then
	FUZZLOGS=$(mktemp -d)
	own_logs=1
fi
want=${1:-.}
mkdir -p "$FUZZLOGS"

# Targets as "package-dir name", from the test files git knows of (tracked, or new and not
# ignored) outside the nested modules, which `go test` from here cannot build. A nested module is
# any directory with a go.mod of its own, so a new one is left out without a list to keep.
git_files() { git ls-files --cached --others --exclude-standard -- "$@"; }
mapfile -t nested < <(git_files '*/go.mod' | sed -E 's#^(.*)/go\.mod$#:(exclude)\1/#')
targets=$(git_files '*_test.go' "${nested[@]}" |
	xargs grep -H -o -E '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' |
	sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort -u | awk -v re="$want" '$2 ~ re')
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz target matches '$want'" >&2
	exit 1
fi

failed=0
start=$SECONDS
printf '%-28s %-28s %8s %12s %8s %s\n' target package seconds execs new result
while read -r dir name; do
	log="$FUZZLOGS/$name.log"
	t0=$SECONDS
	$GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZE" \
		-parallel "$FUZZPARALLEL" "./$dir" >"$log" 2>&1
	rc=$?
	# The last progress line holds the totals: "fuzz: elapsed: 3s, execs: 9178 (3059/sec), new
	# interesting: 4 (total: 12)".
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	new=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	result=ok
	if [ $rc -ne 0 ]; then
		failed=1
		result="FAIL $(grep -o -E 'testdata/fuzz/[^ ]+' "$log" | head -1)"
		[ "$result" = "FAIL " ] && result="FAIL (see $log)"
	fi
	printf '%-28s %-28s %8d %12s %8s %s\n' "$name" "$dir" $((SECONDS - t0)) "${execs:-0}" "${new:-0}" "$result"
	if [ $rc -ne 0 ]; then
		sed -n '/^--- FAIL/,$p' "$log" | head -40 | sed 's/^/    /'
	fi
done <<<"$targets"
if [ $failed -eq 0 ] && [ -n "${own_logs:-}" ]; then
	rm -rf "$FUZZLOGS"
	echo "fuzz: $(wc -l <<<"$targets") targets in $((SECONDS - start)) s, FUZZTIME=$FUZZTIME each"
else
	echo "fuzz: $(wc -l <<<"$targets") targets in $((SECONDS - start)) s, FUZZTIME=$FUZZTIME each; logs in $FUZZLOGS"
fi
exit $failed
