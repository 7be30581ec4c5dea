# gaffer — make targets. `make demo` and `make test` need nothing but Go and git.
GO        ?= go
BIN       ?= bin/gaffer
# The version comes from the build info (module version, VCS revision);
# VERSION=v1.2.3 names one instead.
VERSION   ?=
LDFLAGS   := $(if $(VERSION),-X main.version=$(VERSION))
BUILDFLAGS := -buildvcs=auto -trimpath
DIST      ?= dist
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
FUZZTIME  ?= 20s
BENCHTIME ?= 1s
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)

.PHONY: build install dist test demo bench lint fuzz clean

# The first build compiles some 550 packages (about a minute; on a fresh
# machine go downloads the modules first): it says so, and shows go's
# progress, a line per 50 packages compiled (go build -v's package
# names), with every other line of go's (downloads, errors) as it is and
# go's exit status. A build with nothing to compile prints the first line only.
# (cli's TestMakeBuildShowsProgress runs this recipe; TestFirstDay, make demo.)
build:
	@echo "building gaffer into $(BIN) (first time: about a minute)…"
	@{ $(GO) build -v $(BUILDFLAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gaffer 2>&1; echo "go-exit $$?"; } | \
	  awk '/^go-exit [0-9]+$$/ { code = $$2; next } \
	    /^[A-Za-z0-9._~\/+-]+$$/ { n++; if (n % 50 == 0) { printf "  %d packages compiled (%s)\n", n, $$0; fflush() } next } \
	    { print; fflush() } \
	    END { if (n && !code) printf "  %d packages compiled: $(BIN) is ready\n", n; exit code }'

# Into $(go env GOBIN), or $(go env GOPATH)/bin, as go install does.
install:
	$(GO) install $(BUILDFLAGS) -ldflags "$(LDFLAGS)" ./cmd/gaffer

# Static binaries for Linux and macOS, amd64 and arm64, and their SHA-256 sums.
dist:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "== $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(BUILDFLAGS) -ldflags "$(LDFLAGS)" -o $(DIST)/gaffer-$$os-$$arch ./cmd/gaffer; \
	done
	cd $(DIST) && sha256sum gaffer-* > SHA256SUMS

test:
	$(GO) test -race -count=1 -timeout 60m ./...

demo: build
	./$(BIN) demo

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./graph ./checkpoint/...
	$(GO) test -run '^$$' -bench 'StepCost|PlanGrowth' -benchtime 3x ./nodes
	$(GO) test -run '^$$' -bench LaneTree -benchtime 3x -timeout 60m ./workspace
	$(GO) test -run '^$$' -bench PhaseOverhead -benchtime 3x -timeout 60m ./cli
	$(GO) test -run '^$$' -bench ParallelPhase -benchtime 1x -timeout 20m ./cli
	$(GO) test -run '^$$' -bench ListManyRuns -benchtime 1x -timeout 30m ./cli
	$(GO) test -run '^$$' -bench MCPRunStatus -benchtime 50x -timeout 30m ./cli

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@test -x $(STATICCHECK) || { mkdir -p bin/tools && GOBIN=$(CURDIR)/bin/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && mv bin/tools/staticcheck $(STATICCHECK); }
	$(STATICCHECK) ./...

# Runs every fuzz target for FUZZTIME each (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf bin $(DIST)
