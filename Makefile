# Deskhand. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO      ?= go
BIN     := bin/deskhand
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Debian/Ubuntu packages: cgo (SQLite), the GL/X11 headers the desktop app
# builds against, Xvfb, a window manager (openbox), ImageMagick and xdotool
# for the headed GUI check, a real Secret Service (gnome-keyring on a D-Bus
# session) for the keychain tests, and npm for the interop tests (it installs the Node.js 22 they need:
# see node22), and mingw-w64 to cross-build the Windows program (see cross).
# dbus-x11 is deliberately absent: it makes D-Bus auto-launch daemons that
# outlive the tests.
APT_PACKAGES := gcc libc6-dev pkg-config git ca-certificates \
	libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev \
	xvfb xauth openbox dbus gnome-keyring libsecret-tools nodejs npm curl imagemagick xdotool \
	gcc-mingw-w64-x86-64

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# Every download is tried up to three times (.ci/retry.sh): one hiccup of a
# registry must not fail a run.
deps: ## install what building and testing need (Debian/Ubuntu; says what to install elsewhere)
	@.ci/deps.sh $(APT_PACKAGES)
	@.ci/retry.sh -- $(GO) mod download

# Node.js 22 with npm for the interop tests, into .cache/node22 (npm registry).
node22: deps
	@.ci/node22.sh

build: deps ## build bin/deskhand
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

run: build ## build and start Deskhand: the tray app, or headless serving when there is no display
	./$(BIN)

# staticcheck 2026.2.2, pinned here (not in go.mod's tool block) like the
# fyne tool below. Its default checks less ST1005: Deskhand's error strings
# start with the product's name ("Deskhand is not answering at ...") or
# quote another program's error verbatim, which ST1005 would lower-case.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
STATICCHECK_CHECKS := inherit,-ST1005
STATICCHECK_BIN := $(CURDIR)/.cache/staticcheck-$(lastword $(subst @, ,$(STATICCHECK)))/staticcheck

$(STATICCHECK_BIN):
	GOBIN=$(dir $@) .ci/retry.sh -- $(GO) install $(STATICCHECK)

lint: deps $(STATICCHECK_BIN) ## go vet and the pinned staticcheck
	$(GO) vet ./...
	$(STATICCHECK_BIN) -checks $(STATICCHECK_CHECKS) ./...

test: deps lint cross node22 ## lint, cross-check Windows and macOS, then every test with -race, including the real-keychain and interop tests
	LANG=en_US.UTF-8 $(GO) test -race -count=1 ./...
	store/keychain/testdata/real-keyring.sh -v
	.ci/gui-check.sh

# Windows: the whole program, cross-built with Debian's mingw-w64 and vetted
# with its tests. macOS: no SDK here, so every package is vetted without
# cgo except main and the desktop's two that import fyne (its GL driver
# needs cgo); they hold no OS-specific code (layout_test.go keeps it so).
# The first cross build compiles fyne's GL bindings for Windows (minutes);
# Go's build cache keeps it for the next run.
WINDOWS_ENV := GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc
MODULE      := github.com/deskhand/deskhand

cross: deps ## build the Windows program and vet every package for Windows and macOS
	$(WINDOWS_ENV) $(GO) build -o /dev/null .
	$(WINDOWS_ENV) $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -vx -e '$(MODULE)' -e '$(MODULE)/ui/desktop' -e '$(MODULE)/ui/desktop/connector')

gui-check: deps ## run the desktop app under Xvfb, answer a question in its popup, keep screenshots
	.ci/gui-check.sh

BENCHTIME ?= 2000x

bench: deps ## measure Deskhand beside a bare mcp-go server, the store at 1M messages and the process; prints a table, writes server/bench/results.json, fails on a missed target
	@# Both run, whichever misses: the second's figure is in the report too.
	rc=0; \
	DESKHAND_BENCH_JSON=$(CURDIR)/server/bench/results.json $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m ./server/bench || rc=$$?; \
	DESKHAND_TAB_TARGET=1 $(GO) test -run '^$$' -bench 'ConversationsTabAt100k|ConversationOf1000Turns' -benchtime 20x -timeout 10m ./ui/desktop || rc=$$?; \
	exit $$rc

PROFILE_CALL ?= SideBySide/2026-07-28/call,_new_conversation/clients=1$$

bench-profile: deps ## CPU profile of one request of make bench (PROFILE_CALL), top entries by cumulative time; the profile is left in /tmp/deskhand-cpu.out
	DESKHAND_BENCH_ONLY=deskhand $(GO) test -run '^$$' -bench '$(PROFILE_CALL)' -benchtime $(BENCHTIME) -cpuprofile /tmp/deskhand-cpu.out ./server/bench
	$(GO) tool pprof -top -cum -nodecount=50 /tmp/deskhand-cpu.out

# Each fuzz target and its package; make test runs their seed corpora.
FUZZ_TARGETS := FuzzHandler:./server/mcpserver FuzzToolArguments:./server/mcpserver FuzzDecodeChunk:./models/ollama \
	FuzzOpenState:./server/mcpserver FuzzWriters:./ui/connect
FUZZTIME ?= 30s

fuzz: ## fuzz each target for FUZZTIME (default 30s): HTTP entry, tool arguments, requestState, config writers, Ollama stream lines
	for t in $(FUZZ_TARGETS); do \
		$(GO) test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) "$${t#*:}" || exit 1; \
	done

LOAD_SECONDS ?= 60

load: deps ## 200 clients, both eras, for LOAD_SECONDS a run against deskhand serve and the desktop app under Xvfb, two runs each, with a streaming fake Ollama; prints CPU and popup figures, fails on a missed target
	@# A home of its own for the session (the keyring daemon D-Bus starts writes there), Go's caches kept.
	home=$$(mktemp -d) && trap 'rm -rf "$$home"' EXIT && \
	GOCACHE=$$($(GO) env GOCACHE) GOMODCACHE=$$($(GO) env GOMODCACHE) GOPATH=$$($(GO) env GOPATH) GOENV=$$($(GO) env GOENV) \
	HOME=$$home LANG=en_US.UTF-8 xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- env DESKHAND_LOAD=1 DESKHAND_LOAD_SECONDS=$(LOAD_SECONDS) \
		$(GO) test -count=1 -run '^TestLoad$$' -v -timeout 30m ./server/bench

# The fyne tool, pinned here rather than in go.mod's tool block: as a module
# requirement it would upgrade the fyne library this app builds against.
FYNE_TOOL := fyne.io/tools/cmd/fyne@v1.7.4

FYNE := $(CURDIR)/.cache/fyne-$(lastword $(subst @, ,$(FYNE_TOOL)))/fyne

$(FYNE):
	GOBIN=$(dir $(FYNE)) .ci/retry.sh -- $(GO) install $(FYNE_TOOL)

# The fyne tool adds one to FyneApp.toml's Build after each package: the
# file is put back, so that packaging leaves the tree as it was. The
# Claude Desktop extension is written by the Linux deskhand just built
# (bin/deskhand), around the Windows program; DESKHAND_DATA is unset so
# that the extension uses the default data folder on the Windows machine.
package: deps $(FYNE) build ## build the Linux bundle (Deskhand.tar.xz), the Windows program (Deskhand.exe, cross-built with mingw-w64) and its Claude Desktop extension (Deskhand.mcpb)
	cp FyneApp.toml .cache/FyneApp.toml.kept
	$(FYNE) package --os linux --release && \
	$(WINDOWS_ENV) $(FYNE) package --os windows --release; \
	status=$$?; cp .cache/FyneApp.toml.kept FyneApp.toml; exit $$status
	env -u DESKHAND_DATA $(BIN) connect claude-desktop --extension Deskhand.mcpb --extension-program Deskhand.exe

tidy-check: ## fail when go.mod/go.sum are not tidy
	$(GO) mod tidy -diff

clean: ## remove build output
	rm -rf bin artifacts Deskhand.tar.xz Deskhand.exe Deskhand.mcpb

.PHONY: help deps node22 build run lint cross test gui-check package bench bench-profile load fuzz tidy-check clean
