#!/usr/bin/env bash
# Checks what building gns3-copilot needs before anything is built, and says in one line
# what to install: Go >= the go.mod version, and a C compiler (SQLite is linked through cgo).
# `make run`, `make build` and `make test` run it first.
set -uo pipefail
cd "$(dirname "$0")/.."

need=$(awk '$1 == "go" { print $2; exit }' go.mod)
fail=0

# ver_ge A B: is version A >= version B (dotted numbers)?
ver_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

if ! command -v go >/dev/null 2>&1; then
	echo "check: Go is not installed (no go on PATH): install Go $need or newer from https://go.dev/dl/ and put its bin directory on PATH" >&2
	exit 1
fi
# Outside the module, so an old go does not stop at go.mod's version line and a new one does
# not switch toolchains: this is the go on PATH itself.
have=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null)
have=${have#go}
if [ -z "$have" ] || ! ver_ge "$have" "$need"; then
	echo "check: Go $need or newer is needed, found ${have:-an unknown version} at $(command -v go): install it from https://go.dev/dl/ and put its bin directory first on PATH" >&2
	fail=1
fi

cc=$(cd / && go env CC 2>/dev/null)
cc=${cc:-gcc}
if ! command -v "${cc%% *}" >/dev/null 2>&1; then
	echo "check: no C compiler ($cc): SQLite is linked through cgo (gorm.io/driver/sqlite), so the build needs one: apt-get install -y gcc libc6-dev" >&2
	fail=1
elif [ "$(cd / && go env CGO_ENABLED 2>/dev/null)" != "1" ]; then
	echo "check: cgo is turned off (CGO_ENABLED=0): SQLite is linked through cgo (gorm.io/driver/sqlite); unset CGO_ENABLED or set it to 1" >&2
	fail=1
fi
exit $fail
