# whetstone — `make demo` runs one full review loop offline; `make test` runs every test.
SHELL := /bin/sh
GO ?= go
CACHE ?= $(CURDIR)/.cache
CLAUDE_VERSION := 2.1.329
CLAUDE := $(CACHE)/claude/node_modules/@anthropic-ai/claude-code-linux-x64/claude
export WHETSTONE_CACHE := $(CACHE)

.PHONY: build test unit e2e fuzz bench demo claude validate-plugin clean

build: bin/whetstone

bin/whetstone: go.mod go.sum VERSION $(shell find cmd internal -name '*.go' -not -name '*_test.go' 2>/dev/null) version.go
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./cmd/whetstone

# claude installs the pinned Claude Code into $(CACHE)/claude (npm registry only).
claude: $(CLAUDE)
$(CLAUDE):
	./scripts/install-claude

test: unit e2e

# unit runs the Go tests (unit, testscript, concurrency, crash), the race
# detector, and a short fuzz pass over every decoder and validator.
unit: build
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(MAKE) fuzz FUZZTIME=5s

e2e: build claude
	./scripts/validate-plugin "$(CLAUDE)"
	WHETSTONE_CLAUDE="$(CLAUDE)" WHETSTONE_PLUGIN="$(CURDIR)" $(GO) test -count=1 -timeout 30m ./e2e/

FUZZTIME ?= 5m
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz' | sort -u); do \
		pkg=$$(grep -rl "func $$t(" --include='*_test.go' . | head -1 | xargs dirname); \
		echo "fuzz $$pkg $$t $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) "$$pkg" || exit 1; \
	done

bench: build
	./scripts/bench

demo: build claude
	WHETSTONE_CLAUDE="$(CLAUDE)" WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo

clean:
	rm -rf bin
