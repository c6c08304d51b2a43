# toolharness — see README.md.
SHELL      := /bin/bash
.SHELLFLAGS := -o pipefail -c
GO        ?= go
FUZZTIME  ?= 20s
TEST_FLAGS ?= -race -timeout 40m -count=1

# go.mod needs Go 1.27 (github.com/ardanlabs/jinja >= v1.9.0); the go command fetches
# this toolchain from the module proxy on first use (about 10 s).
export GOTOOLCHAIN ?= go1.27.3

# Where `make ollama` and `make llamacpp` keep what they build: outside the clone, so
# that a fresh clone on the same machine (CI) reuses it.
export TOOLHARNESS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/toolharness
# The real Ollama the end-to-end tests start (built by `make ollama`).
export TOOLHARNESS_OLLAMA_BIN ?= $(TOOLHARNESS_CACHE)/ollama/bin/ollama
# The real llama.cpp server and its source tree, whose models/ggml-vocab-*.gguf are the
# real tokenizers of the test models (built by `make llamacpp`).
export TOOLHARNESS_LLAMACPP_DIR ?= $(TOOLHARNESS_CACHE)/llamacpp
# Claude Code, which serve's end-to-end test drives (installed by `make claude-code`).
export TOOLHARNESS_CLAUDE_BIN ?= $(TOOLHARNESS_CACHE)/claude-code/node_modules/.bin/claude

# staticcheck, pinned: `go run` fetches and builds it from the module proxy on first use
# and caches the build, so a fresh clone needs nothing installed.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build install vet lint test unit e2e bench fuzz ollama llamacpp claude-code deps clean

all: build

build:
	$(GO) build -o bin/toolharness ./cmd/toolharness

## install: toolharness into $(go env GOPATH)/bin, on your PATH.
install:
	$(GO) install ./cmd/toolharness

vet:
	$(GO) vet ./...

## lint: go vet and staticcheck (default checks), both clean.
lint: vet
	$(STATICCHECK) ./...

## test: everything CI runs: go vet and staticcheck, unit tests with -race, end-to-end tests against a real
## Ollama and a real llama.cpp server.
test: deps ollama llamacpp claude-code lint unit e2e

unit:
	$(GO) test $(TEST_FLAGS) -skip '^TestE2E' ./...

e2e: ollama llamacpp claude-code
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

## claude-code: install Claude Code (npm) into $(TOOLHARNESS_CACHE)/claude-code when it is
## missing, for serve's end-to-end test.
claude-code:
	scripts/install-claude-code.sh

## llamacpp: build llama.cpp's llama-server (from the pinned npm package node-llama-cpp)
## into $(TOOLHARNESS_LLAMACPP_DIR) when it is missing (15-25 minutes on 2 cores, once).
llamacpp:
	scripts/install-llamacpp.sh

clean:
	rm -rf bin
