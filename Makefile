# gaffer — make targets. `make demo` and `make test` need nothing but Go and git.
GO        ?= go
BIN       ?= bin/gaffer
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 20s
BENCHTIME ?= 1s
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)

.PHONY: build test demo bench lint fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gaffer

test:
	$(GO) test -race -count=1 -timeout 30m ./...

demo: build
	./$(BIN) demo

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./graph ./checkpoint/...
	$(GO) test -run '^$$' -bench 'StepCost|PlanGrowth' -benchtime 3x ./nodes
	$(GO) test -run '^$$' -bench PhaseOverhead -benchtime 5x -timeout 60m ./workspace

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
	rm -rf bin
