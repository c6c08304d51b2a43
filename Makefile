# toolharness — see README.md.
SHELL      := /bin/bash
.SHELLFLAGS := -o pipefail -c
GO        ?= go
FUZZTIME  ?= 20s
TEST_FLAGS ?= -race -timeout 40m -count=1

# go.mod needs Go 1.27 (github.com/ardanlabs/jinja >= v1.9.0); the go command fetches
# this toolchain from the module proxy on first use (about 10 s).
export GOTOOLCHAIN ?= go1.27.3

# The real Ollama the end-to-end tests start (built by `make ollama`).
export TOOLHARNESS_OLLAMA_BIN ?= $(CURDIR)/.cache/ollama/bin/ollama

.PHONY: all build vet test unit e2e bench fuzz ollama deps clean

all: build

build:
	$(GO) build -o bin/toolharness ./cmd/toolharness

vet:
	$(GO) vet ./...

## test: everything CI runs: vet, unit tests with -race, end-to-end tests against a real Ollama.
test: deps ollama vet unit e2e

unit:
	$(GO) test $(TEST_FLAGS) -skip '^TestE2E' ./...

e2e: ollama
	$(GO) test $(TEST_FLAGS) -run '^TestE2E' -v ./... 2>&1 | scripts/e2e-summary.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

## ollama: build Ollama v0.6.5 into .cache/ollama/bin when it is missing.
ollama:
	scripts/install-ollama.sh

## deps: system packages the tests need (headless Chromium for the HTML report test).
deps:
	scripts/install-deps.sh

clean:
	rm -rf bin
