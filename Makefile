# The two commands a newcomer needs are `make run` and `make test`; see README.md.
SHELL := /bin/bash
GO ?= go
BIN := bin/gns3-copilot

.PHONY: run build temporal test web-deps vet test-go test-web-unit bench

# Builds the copilot, installs the pinned Temporal CLI if it is missing, and runs `serve`
# on its embedded defaults (SQLite, in-process event log, its own Temporal dev server).
run: build temporal
	./$(BIN) serve

build:
	$(GO) build -o $(BIN) ./cmd/gns3-copilot

temporal:
	./scripts/install-temporal.sh

# Every test: formatting and vet, the Go suites with the race detector (the browser tests are
# launched from `go test ./web`), and the page's Node unit tests.
test: temporal web-deps vet test-go test-web-unit

# playwright-core for the browser tests, from package-lock.json; it never downloads a browser.
web-deps:
	@if command -v npm >/dev/null; then cd web/e2e && npm ci --no-audit --no-fund --loglevel=error; \
	else echo "npm is missing: the browser tests will be skipped (apt-get install -y nodejs npm)"; fi

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 -timeout 40m ./...

test-web-unit:
	@if command -v node >/dev/null; then cd web/e2e && node --test unit/; \
	else echo "node is missing: skipping the page's unit tests"; fi

# Benchmarks quoted in the closing notes: time to first token (service vs model; and against a
# GNS3 answering in 8 ms, with and without the live topology), console commands on 1 vs 50 real
# VPCS, event log round trips, packet capture decoding, the memory of idle SSE clients, and the
# load command: LOAD_TURNS (default 100) students send a message at the same moment to `serve`
# on its embedded defaults.
LOAD_TURNS ?= 100
bench:
	$(GO) test -run '^$$' -bench 'TimeToFirstToken$$' -benchtime 30x ./e2e
	$(GO) test -run '^$$' -bench TimeToFirstTokenSlowGNS3 -benchtime 50x ./e2e
	$(GO) test -run '^$$' -bench ShowIP -benchtime 30x ./devices
	$(GO) test -run '^$$' -bench ConfigJob -benchtime 3x ./activities
	$(GO) test -run '^$$' -bench . ./relay/...
	$(GO) test -run '^$$' -bench Decode -benchtime 20x ./capture
	$(GO) test -run '^$$' -bench ProxyAddedLatency -benchtime 3000x ./api
	$(GO) test -run '^$$' -bench IdleSSEClients -benchtime 1x ./api
	LOAD_TURNS=$(LOAD_TURNS) $(GO) test -run '^$$' -bench ConcurrentTurns -benchtime 1x -timeout 20m ./e2e
