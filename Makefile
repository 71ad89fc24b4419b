# The two commands a newcomer needs are `make run` and `make test`; see README.md.
SHELL := /bin/bash
GO ?= go
BIN := bin/gns3-copilot
# The Go packages `make test` runs (scripts/newcomer-check.sh narrows them).
TEST_PKGS ?= ./...

.PHONY: run build check temporal test web-deps vet test-go test-fuzz test-web-unit fuzz bench newcomer-check deb screenshots cluster-load

# Builds the copilot, installs the pinned Temporal CLI if it is missing, and runs `serve`
# on its embedded defaults (SQLite, in-process event log, its own Temporal dev server).
run: check build temporal
	./$(BIN) serve

# Go >= go.mod's version and a C compiler, each missing one said in one line, before any build.
check:
	@scripts/check-toolchain.sh

# `gns3-copilot version` says when it was built and from which commit (Go stamps the commit
# itself unless GOFLAGS has -buildvcs=false).
BUILD_TIME := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILD_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
STAMP := -X main.buildTime=$(BUILD_TIME) -X main.buildCommit=$(BUILD_COMMIT)

build: check
	@[ -x $(BIN) ] || echo "building gns3-copilot: a first build compiles about 600 packages from 55 modules (3-4 minutes on 2 cores, modules fetched from the Go module proxy); later builds take seconds"
	$(GO) build -ldflags "$(STAMP)" -o $(BIN) ./cmd/gns3-copilot

temporal:
	@scripts/install-temporal.sh

# The Debian package for GNS3 hosts (packaging/, its own Go module: nfpm, no Docker), with the
# binary stripped and the pinned Temporal CLI and gns3-copilot-temporal included. DEB_VERSION defaults to 0.0.0~git<date>.<commit>.
DEB_VERSION ?= 0.0.0~git$(shell git log -1 --format=%cd.%h --date=format:%Y%m%d 2>/dev/null || date +%Y%m%d)
deb: check temporal
	@mkdir -p dist
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "-s -w $(STAMP) -X main.buildVersion=$(DEB_VERSION)" -o dist/gns3-copilot ./cmd/gns3-copilot
	cd packaging && $(GO) run . -binary ../dist/gns3-copilot -version $(DEB_VERSION) \
		-temporal "$$(command -v temporal || { b=$$($(GO) env GOBIN); echo "$${b:-$$($(GO) env GOPATH | cut -d: -f1)/bin}/temporal"; })" \
		-devserver "$$(command -v gns3-copilot-temporal || { b=$$($(GO) env GOBIN); echo "$${b:-$$($(GO) env GOPATH | cut -d: -f1)/bin}/gns3-copilot-temporal"; })" \
		-out ../dist/gns3-copilot_$(DEB_VERSION)_$$($(GO) env GOARCH).deb

# The README's pictures (docs/images), taken from the real page in Chromium by
# web/screenshots_browser_test.go; `make test` skips that test.
screenshots: check temporal web-deps
	GNS3_COPILOT_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestScreenshots$$' -v ./web

# Every test: no tracked file over 5 MB, formatting and vet, the Go suites with the race detector (the browser tests are
# launched from `go test ./web`), a brief fuzzing pass under CI, and the page's Node unit tests. Outside CI the Go run
# ends with one line counting the tests skipped for want of PostgreSQL, Redis, the CLI or a browser.
test: check temporal web-deps vet test-go test-fuzz test-web-unit

# playwright-core for the browser tests and the official MCP TypeScript SDK for the MCP client
# tests (e2e/mcpsdk), each from its package-lock.json; nothing downloads a browser.
web-deps:
	@if command -v npm >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then \
		(cd web/e2e && npm ci --no-audit --no-fund --loglevel=error) && \
		(cd e2e/mcpsdk && npm ci --no-audit --no-fund --loglevel=error); \
	elif [ "$$CI" = true ]; then echo "web-deps: CI runs the browser and MCP SDK tests, which need Node >= 20 and npm (.ci/run installs them)"; exit 1; \
	else echo "web-deps: Node >= 20 with npm is missing: the browser, page and MCP SDK tests will be skipped (see README: Node >= 20)"; fi

# The Go modules beside the main one that `make test` vets and tests: the memory trimming
# serve shares with the copilot's own Temporal dev server, and that dev server (which links the
# Temporal server, so a module of its own; `make temporal` builds it).
NESTED_MODULES := internal/memtrim cmd/gns3-copilot-temporal

vet:
	@scripts/check-tracked-files.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd packaging && $(GO) vet ./...
	for m in $(NESTED_MODULES); do $(GO) -C $$m vet ./... || exit 1; done

# The dev server's module is tested without the race detector: its own code is its command
# line, and a race build of the Temporal server under it costs minutes.
test-go:
	@if [ "$$CI" = true ]; then set -x; $(GO) test -race -count=1 -timeout 40m $(TEST_PKGS); \
	else set -o pipefail; $(GO) test -race -count=1 -timeout 40m -json $(TEST_PKGS) | $(GO) run ./scripts/testsummary; fi
	$(GO) -C internal/memtrim test -race -count=1 ./...
	$(GO) -C cmd/gns3-copilot-temporal test -count=1 ./...

# The fuzz targets (func FuzzXxx; see scripts/fuzz.sh) run their seed corpus and the crashers kept
# under testdata/fuzz in every `go test`. Under CI=true, test-fuzz also fuzzes each of them for
# FUZZTIME_CI (3 s), one worker, one target per `go test` as Go requires: 40-60 s in all once
# the Go build cache holds their instrumented builds, a few minutes more on a cold cache (the
# mcp target links the Temporal SDK and gin). Where the cache also holds the inputs a campaign
# found (GOCACHE/fuzz), the seconds go to replaying those first. A crash fails the run and
# leaves its input under the package's testdata/fuzz, a regression test once committed.
FUZZTIME_CI ?= 3s
test-fuzz:
	@if [ "$$CI" = true ]; then FUZZTIME=$(FUZZTIME_CI) scripts/fuzz.sh; \
	else echo "test-fuzz: the fuzz targets' seeds ran with the Go tests; fuzzing beyond them runs under CI=true, or longer with make fuzz"; fi

# A fuzzing campaign on this machine: every fuzz target in turn for FUZZTIME (default 3m; the
# closing note of issue 50 ran 10m30s each), one worker per target (FUZZPARALLEL), printing per
# target its executions and new interesting inputs. FUZZ selects targets by a regular
# expression, e.g. make fuzz FUZZ='^FuzzConsole$$' FUZZTIME=10m.
FUZZTIME ?= 3m
FUZZ ?= .
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh '$(FUZZ)'

test-web-unit:
	@if command -v node >/dev/null; then cd web/e2e && node --test unit/; \
	elif [ "$$CI" = true ]; then echo "test-web-unit: CI runs the page's unit tests, which need Node >= 20"; exit 1; \
	else echo "test-web-unit: Node >= 20 is missing: the page's unit tests will be skipped"; fi

# The newcomer's path on a fresh clone with empty Go caches (slow: ~10 minutes of both cores);
# `scripts/newcomer-check.sh --quick` is the cheap part CI runs.
newcomer-check:
	scripts/newcomer-check.sh

# Benchmarks quoted in the closing notes: time to first token (service vs model; and against a
# GNS3 answering in 8 ms, with and without the live topology, for a message typed right after
# the previous one and for the first one after a pause), console commands on 1 vs 50 real
# VPCS, event log round trips, packet capture decoding, the memory of idle SSE clients, an MCP
# tool call against the same tool run directly, the share of each model request a prefix cache
# can reuse (both orders a model server renders a request in) with the tokens per call, and the
# load command: LOAD_TURNS (default 100) students send a message at the same moment to `serve`
# on its embedded defaults, then LOAD_TURNS_LARGE (default 300: a large class, or three classes
# on one server).
LOAD_TURNS ?= 100
LOAD_TURNS_LARGE ?= 300
bench:
	$(GO) test -run '^$$' -bench 'TimeToFirstToken$$' -benchtime 30x ./e2e
	$(GO) test -run '^$$' -bench 'TimeToFirstTokenSlowGNS3$$' -benchtime 50x ./e2e
	$(GO) test -run '^$$' -bench TimeToFirstTokenSlowGNS3AfterPause -benchtime 50x ./e2e
	$(GO) test -run '^$$' -bench TimeToFirstTokenThinking -benchtime 100x ./e2e
	$(GO) test -run '^$$' -bench MCPCallOverhead -benchtime 50x ./e2e
	$(GO) test -run '^$$' -bench PromptPrefixCache -benchtime 1x ./e2e
	$(GO) test -run '^$$' -bench ShowIP -benchtime 30x ./internal/lab/devices
	$(GO) test -run '^$$' -bench ConfigJob -benchtime 3x ./activities
	$(GO) test -run '^$$' -bench . ./internal/relay/...
	$(GO) test -run '^$$' -bench Decode -benchtime 20x ./internal/lab/capture
	$(GO) test -run '^$$' -bench ProxyAddedLatency -benchtime 3000x ./api
	$(GO) test -run '^$$' -bench IdleSSEClients -benchtime 1x ./api
	$(GO) test -run '^$$' -bench '^Benchmark(SessionList|History)$$' -benchtime 300x ./api
	$(GO) test -run '^$$' -bench DiskPerTurn -benchtime 1x ./models
	LOAD_TURNS=$(LOAD_TURNS) $(GO) test -run '^$$' -bench BareStartsOnTheDevServer -benchtime 1x ./e2e
	LOAD_TURNS=$(LOAD_TURNS) $(GO) test -run '^$$' -bench ConcurrentTurns -benchtime 1x -timeout 20m ./e2e
	LOAD_TURNS=$(LOAD_TURNS_LARGE) $(GO) test -run '^$$' -bench BareStartsOnTheDevServer -benchtime 1x ./e2e
	LOAD_TURNS=$(LOAD_TURNS_LARGE) $(GO) test -run '^$$' -bench ConcurrentTurns -benchtime 1x -timeout 20m ./e2e

# Not part of `make test`: the scaled-out layout (2 api + 2 worker, Redis, PostgreSQL) on a real
# Temporal server built from the module proxy (~20 minutes of both cores the first time) with
# PostgreSQL persistence, against `serve` in the same minutes, for bursts of LOAD_TURNS_LIST
# (default "100 300") turns; see docs/scale.md "Running at scale".
cluster-load: check temporal
	scripts/temporal-cluster/run.sh
