# whetstone — `make demo` runs one full review loop offline; `make test` runs every test.
SHELL := /bin/sh
GO ?= go
CACHE ?= $(CURDIR)/.cache
export WHETSTONE_CACHE := $(CACHE)

.PHONY: build test unit e2e e2e-opencode fuzz bench demo claude opencode ripgrep bwrap clean generate

build: bin/whetstone

bin/whetstone: go.mod go.sum VERSION $(shell find cmd internal -name '*.go' -not -name '*_test.go' 2>/dev/null) version.go
	CGO_ENABLED=0 $(GO) build -trimpath -tags urfave_cli_no_docs -o $@ ./cmd/whetstone

# claude installs the pinned Claude Code (2.1.329) into $(CACHE)/claude from
# the npm registry, once; scripts/install-claude prints the binary's path.
claude:
	@./scripts/install-claude >/dev/null

# bwrap installs bubblewrap when it is missing (root on Debian/Ubuntu), so
# that the sandbox tests run; elsewhere it prints a notice and they skip.
bwrap:
	@./scripts/install-bwrap

test: unit e2e e2e-opencode

# unit runs the Go tests (unit, testscript, concurrency, crash), the race
# detector, and a short fuzz pass over every decoder and validator.
unit: build bwrap
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run '^TestCheckLinear$$' ./internal/shell/
	$(MAKE) fuzz FUZZTIME=20000x

e2e: build
	c=$$(./scripts/install-claude) && ./scripts/validate-plugin "$$c" && \
	WHETSTONE_CLAUDE="$$c" WHETSTONE_PLUGIN="$(CURDIR)" $(GO) test -count=1 -timeout 30m ./e2e/

# opencode installs the pinned OpenCode (1.18.33) and @opencode-ai/plugin
# into $(CACHE)/opencode from the npm registry, once; ripgrep puts rg on
# PATH (Debian's package), which OpenCode would otherwise download.
opencode:
	@./scripts/install-opencode >/dev/null

ripgrep:
	@./scripts/install-ripgrep

# e2e-opencode runs the end-to-end tests in the real OpenCode.
e2e-opencode: build ripgrep
	c=$$(./scripts/install-opencode) && \
	WHETSTONE_OPENCODE="$$c" WHETSTONE_OPENCODE_PLUGIN_PKG="$$(dirname "$$c")/../../@opencode-ai/plugin" \
	$(GO) test -count=1 -timeout 20m -run '^TestOpenCode' ./e2e/

FUZZTIME ?= 5m
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz' | sort -u); do \
		pkg=$$(grep -rl "func $$t(" --include='*_test.go' . | head -1 | xargs dirname); \
		echo "fuzz $$pkg $$t $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) "$$pkg" || exit 1; \
	done

bench: build
	./scripts/bench

# CLIENT=opencode runs the demo in the pinned OpenCode instead.
CLIENT ?= claude
demo: build
ifeq ($(CLIENT),opencode)
	@./scripts/install-ripgrep
	c=$$(./scripts/install-opencode) && WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo -opencode "$$c"
else
	c=$$(./scripts/install-claude) && WHETSTONE_CLAUDE="$$c" WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo
endif

# generate rewrites agents/*.md from internal/brief/src (a test fails when
# the committed files differ).
generate:
	$(GO) run ./cmd/genagents

clean:
	rm -rf bin
