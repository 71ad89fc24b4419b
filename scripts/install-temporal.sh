#!/usr/bin/env bash
# Installs the pinned Temporal CLI, whose dev server `gns3-copilot serve`
# starts and supervises, unless that version is already installed.
# First the official release archive, checked against its published SHA-256
# (scripts/fetch-temporal); when that cannot be fetched or does not match, a
# build from source with `go install`.
# Then builds gns3-copilot-temporal beside it (cmd/gns3-copilot-temporal): the
# same CLI's dev server, which gives back the memory starting it took; serve
# prefers it, and runs the CLI when it is missing.
# Idempotent: a second run only prints where they are.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.5.1
PACKAGE=github.com/temporalio/cli/cmd/temporal

die() { echo "install-temporal: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is needed to install the Temporal CLI (https://go.dev/doc/install)"

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

# path_note looks at PATH as it is now, after any install: gns3-copilot finds
# the CLI in $GOBIN or $(go env GOPATH)/bin whether or not that is on PATH,
# but another temporal found first on PATH would be used instead.
path_note() {
	local first
	first=$(command -v temporal 2>/dev/null || true)
	if [ -n "$first" ] && [ "$first" != "$1" ]; then
		echo "note: another temporal ($(version_of "$first")) comes first on PATH at $first;" \
			"gns3-copilot uses the first one on PATH unless given --temporal-cli $1" >&2
	elif [ -z "$first" ]; then
		echo "note: $(dirname "$1") is not on PATH; gns3-copilot finds the CLI there anyway." \
			"To run temporal yourself: export PATH=\"$(dirname "$1"):\$PATH\""
	fi
}

# install_devserver builds gns3-copilot-temporal into $gobin unless it is newer than its
# sources. It links the Temporal server: seconds after a CLI built from source here (the build
# cache is shared), minutes after a release archive. A failed build is not fatal.
install_devserver() {
	local dest="$gobin/gns3-copilot-temporal" src=cmd/gns3-copilot-temporal
	if [ -x "$dest" ] && [ -z "$(find "$src" internal/memtrim -type f -newer "$dest" -print -quit)" ]; then
		echo "gns3-copilot-temporal is up to date: $dest"
		return
	fi
	echo "building gns3-copilot-temporal (the CLI's dev server, lighter on memory) into $gobin"
	local began
	began=$(date +%s)
	if go build -C "$src" -o "$dest" .; then
		echo "gns3-copilot-temporal is installed: $dest (took $(($(date +%s) - began)) s)"
	else
		echo "install-temporal: gns3-copilot-temporal did not build; serve runs the CLI's dev server instead (about 50 MB more memory on the host)" >&2
	fi
}

on_path=$(command -v temporal 2>/dev/null || true)
for candidate in "$on_path" "$target"; do
	if [ -n "$candidate" ] && [ -x "$candidate" ] && [ "$(version_of "$candidate")" = "$VERSION" ]; then
		echo "temporal $VERSION is installed: $candidate"
		path_note "$candidate"
		install_devserver
		exit 0
	fi
done

mkdir -p "$gobin"
began=$(date +%s)
echo "installing temporal $VERSION into $gobin: trying the release archive first (about 40 MB)"
if go run ./scripts/fetch-temporal -version "$VERSION" -dest "$target"; then
	:
else
	echo "install-temporal: no verified release archive; building temporal $VERSION from source instead"
	echo "install-temporal: the first build takes about 6 minutes on 2 cores, needs the Go module proxy" \
		"and about 2 GB of module and build cache; later runs take a second"
	go install "$PACKAGE@v$VERSION"
fi

[ -x "$target" ] || die "the install finished but $target is missing"
got=$(version_of "$target")
[ "$got" = "$VERSION" ] || die "$target reports version '$got', expected $VERSION"
echo "temporal $VERSION is installed: $target (took $(($(date +%s) - began)) s)"
path_note "$target"
install_devserver
