#!/usr/bin/env bash
# Installs the pinned Temporal CLI, whose dev server `gns3-copilot serve`
# starts and supervises, unless that version is already installed.
# Idempotent: a second run only prints where the CLI is.
set -euo pipefail

VERSION=1.5.1
PACKAGE=github.com/temporalio/cli/cmd/temporal

die() { echo "install-temporal: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is needed to build the Temporal CLI (https://go.dev/doc/install)"

# version_of prints the CLI version of a binary without the leading "v":
# from Go build info for `go install`ed binaries (their --version says
# 0.0.0-DEV), else from `temporal --version` for release downloads.
version_of() {
	local v
	v=$(go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/temporalio/cli" { print $3; exit }')
	if [ -z "$v" ]; then
		v=$("$1" --version 2>/dev/null | awk '$1 == "temporal" && $2 == "version" { print $3; exit }')
	fi
	echo "${v#v}"
}

gobin=$(go env GOBIN)
if [ -z "$gobin" ]; then
	gopath=$(go env GOPATH)
	gobin="${gopath%%:*}/bin"
fi
target="$gobin/temporal"

on_path=$(command -v temporal 2>/dev/null || true)

# warn_path tells the user when the CLI found first on PATH is not the one
# just reported, since gns3-copilot looks on PATH before $GOBIN.
warn_path() {
	if [ -n "$on_path" ] && [ "$on_path" != "$1" ]; then
		echo "note: another temporal ($(version_of "$on_path")) comes first on PATH at $on_path;" \
			"gns3-copilot uses the first one on PATH unless told the CLI path explicitly" >&2
	elif [ -z "$on_path" ]; then
		echo "note: $(dirname "$1") is not on PATH; gns3-copilot also looks in \$GOBIN and \$GOPATH/bin (default ~/go/bin)"
	fi
}

for candidate in "$on_path" "$target"; do
	if [ -n "$candidate" ] && [ -x "$candidate" ] && [ "$(version_of "$candidate")" = "$VERSION" ]; then
		echo "temporal $VERSION is installed: $candidate"
		warn_path "$candidate"
		exit 0
	fi
done

echo "installing temporal $VERSION into $gobin (go install $PACKAGE@v$VERSION; the first build takes several minutes)"
go install "$PACKAGE@v$VERSION"

[ -x "$target" ] || die "go install finished but $target is missing"
got=$(version_of "$target")
[ "$got" = "$VERSION" ] || die "$target reports version '$got', expected $VERSION"
echo "temporal $VERSION is installed: $target"

warn_path "$target"
