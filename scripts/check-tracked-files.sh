#!/usr/bin/env bash
# Fails when git tracks a file over 5 MB: a build output or a dump committed by mistake is
# downloaded by every clone forever, so it is stopped before it lands. Part of `make vet`.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=$((5 * 1024 * 1024))
status=0
while IFS= read -r -d '' path; do
	[ -f "$path" ] || continue # deleted in the work tree, not yet staged
	size=$(stat -c %s -- "$path")
	if [ "$size" -gt "$limit" ]; then
		echo "check-tracked-files: $path is $((size / 1024 / 1024)) MB, over the 5 MB limit: build outputs belong in bin/ or dist/ (ignored); remove it with 'git rm --cached $path'" >&2
		status=1
	fi
done < <(git ls-files -z)
exit $status
