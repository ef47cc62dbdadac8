# reconcile: build, test and demo targets. Needs only Go and make.

GO       ?= go
BIN      := bin/reconcile
EXAMPLES := testdata/examples
DEMO     := .reconcile/demo

.PHONY: all build demo test fmt-check vet lint-workflows race conformance bench fuzz dist clean

all: build

# -buildvcs=auto stamps the commit into the binary ('reconcile version'),
# also where GOFLAGS turns stamping off.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/reconcile

# The main job: plan and apply testdata/examples on the built-in emulator,
# then plan again to show that nothing is left to change. State lives in
# .reconcile/demo, the emulator's data in .reconcile/emulator (where
# --emulator keeps it); the walkthroughs of the guides keep theirs apart, in
# other directories of .reconcile. `make clean` removes them all.
demo: build
	@mkdir -p $(DEMO)
	$(BIN) plan  -f $(EXAMPLES) --emulator --state $(DEMO)/state.db
	$(BIN) apply -f $(EXAMPLES) --emulator --state $(DEMO)/state.db --auto-approve
	$(BIN) plan  -f $(EXAMPLES) --emulator --state $(DEMO)/state.db --detailed-exitcode

test: fmt-check vet lint-workflows race conformance

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The GitHub Actions workflows of the CI kit (ci/github), checked by
# actionlint at the version tools/go.mod pins: 'go tool' builds it from the
# module proxy once and keeps it in Go's build cache, so a machine needs
# only Go. actionlint runs shellcheck on the workflows' scripts when
# shellcheck is installed, as this target does on the kit's script; neither
# needs it.
WORKFLOWS := $(wildcard ci/github/workflows/*.yml)
lint-workflows:
	cd tools && $(GO) tool actionlint $(addprefix ../,$(WORKFLOWS))
	@if command -v shellcheck >/dev/null 2>&1; then shellcheck ci/github/reconcile-gh.sh; \
	else echo "shellcheck is not installed: ci/github/reconcile-gh.sh was not checked by it"; fi

# The end-to-end package alone runs for about ten minutes on a loaded
# 2-core machine, past go test's default timeout.
race:
	$(GO) test -race -count=1 -timeout 30m ./...

# The emulator driven by the vendors' official Go SDKs (oci-go-sdk,
# google.golang.org/api, datadog-api-client-go). Built once, without -race:
# the Datadog client alone takes about 100 s and 7.5 GB to compile cold.
conformance:
	$(GO) vet -tags conformance ./resources/conformance/
	$(GO) test -tags conformance -count=1 ./resources/conformance/

# Benchmarks of validate, plan and apply on generated specs, as a table.
# One table of every benchmark: plan, refresh and apply at 1k and 10k on
# both state backends, the stores, the drivers against the emulator, and
# the binary run as users run it (BenchmarkCLI, Linux only).
bench:
	{ $(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./engine ./state ./state/etcdstate; \
	  $(GO) test -run '^$$' -bench . -benchmem -benchtime 1x ./resources/aiendpoint ./resources/restrictionpolicy; \
	  $(GO) test -run '^$$' -bench CLI -benchtime 3x ./cmd/reconcile; } | \
	  $(GO) run ./internal/benchtable

# Fuzz the spec loader, the interpolation parser, the cuts of a saved
# plan's specs, the load of a large spec in chunks, the plan-file reader
# and the state decoder, one after the other (FUZZTIME=10m for a long run).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./engine/specs -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./engine/specs -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./engine/specs -run '^$$' -fuzz '^FuzzCuts$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./engine/specs -run '^$$' -fuzz '^FuzzChunks$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./engine/plan -run '^$$' -fuzz '^FuzzReadPlanFile$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./engine/plan -run '^$$' -fuzz '^FuzzReadFast$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./state -run '^$$' -fuzz '^FuzzStateDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./cmd/reconcile -run '^$$' -fuzz '^FuzzSanitizer$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s

# Release archives for linux, darwin (amd64, arm64) and windows (amd64),
# with dist/SHA256SUMS, built reproducibly from a clean checkout: the same
# commit and VERSION give the same bytes (see internal/dist).
dist:
	@case "$(VERSION)" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "make dist needs VERSION=vX.Y.Z, e.g. make dist VERSION=v0.1.0" >&2; exit 1 ;; esac
	rm -rf dist
	$(GO) run ./internal/dist -version $(VERSION) -out dist

clean:
	rm -rf bin .reconcile dist
