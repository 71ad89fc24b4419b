# The two commands a newcomer needs are `make run` and `make test`; see README.md.
SHELL := /bin/bash
GO ?= go
BIN := bin/gns3-copilot

.PHONY: run build temporal test test-go test-web vet bench

# Builds the copilot, installs the pinned Temporal CLI if it is missing, and runs `serve`
# on its embedded defaults (SQLite, in-process event log, its own Temporal dev server).
run: build temporal
	./$(BIN) serve

build:
	$(GO) build -o $(BIN) ./cmd/gns3-copilot

temporal:
	./scripts/install-temporal.sh

# Every test: vet, formatting, the Go suites with the race detector, then the browser tests.
test: temporal vet test-go test-web

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 -timeout 30m ./...

test-web: build
	cd web/e2e && npm ci --no-audit --no-fund && node --test

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./e2e ./devices/... ./relay/...
