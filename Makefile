# Felix: the two commands a newcomer runs are `make run` and `make test`.
GO        ?= go
PKGS      ?= ./...
BENCHTIME ?= 500ms
ROUNDS    ?= 10
FUZZTIME  ?= 30s
DATA      ?= ./felix-data
CLUSTER_DIR ?= ./.felix-cluster
STATICCHECK_VERSION ?= v0.8.2
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)

.PHONY: tidy-check staticcheck test-race-skipped

.PHONY: run run-cluster build image test test-short lint vet fmt-check bench fuzz nemesis soak clean

## run: start one broker with embedded defaults (localhost, ./felix-data, Periodic fsync): a cluster
## of one, its etcd member in ./felix-data/etcd
run:
	$(GO) run ./cmd/felix serve --data $(DATA)

## run-cluster: three brokers on this machine (a, b, c: clients on 7117, 7127, 7137), each with an
## embedded etcd member, data under CLUSTER_DIR; Ctrl-C stops them
run-cluster:
	scripts/run-cluster $(CLUSTER_DIR)

## build: the felix binary in ./bin
build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o bin/felix ./cmd/felix

## image: a static Felix image from scratch (deploy/Dockerfile): felix compiled
## here without cgo and copied in, nothing pulled
image:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o deploy/felix ./cmd/felix
	docker build -t felix:$(VERSION) deploy

## test: everything CI runs: formatting, vet, staticcheck, a tidy go.mod, portable builds, the
## race-checked tests, and a pass without -race of the tests that skip under it (allocation counts)
test: fmt-check vet tidy-check staticcheck cross-build
	@scripts/nemesis-nft
	$(GO) test -race -timeout 9m $(PKGS)
	$(MAKE) --no-print-directory test-race-skipped

## test-race-skipped: the tests that skip themselves under -race, run without it
test-race-skipped:
	@GO=$(GO) scripts/run-race-skipped

## test-short: the tests without the race detector, for a quick loop
test-short:
	$(GO) test -short -timeout 5m $(PKGS)

## lint: gofmt, go vet, staticcheck and a tidy go.mod
lint: fmt-check vet tidy-check staticcheck

## tidy-check: go.mod and go.sum are what `go mod tidy` makes
tidy-check:
	$(GO) mod tidy -diff

## staticcheck: at a pinned version, fetched through the module proxy
staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

## cross-build: the portable path must build for darwin and windows (compiled, not
## optimized: it checks that every package builds there, and keeps no binary)
cross-build:
	GOOS=darwin  GOARCH=arm64 $(GO) build -gcflags=all='-N -l' ./...
	GOOS=windows GOARCH=amd64 $(GO) build -gcflags=all='-N -l' ./...

## bench: the storage, ring and codec benchmarks with their raw baselines
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./ring/... ./segment/... ./engine/... ./netio/... ./client/...

## fuzz: each fuzz target for FUZZTIME (the seed corpora already run in `make test`)
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## nemesis: the real-process nemeses (kill -9, SIGSTOP past the lease, partitions with nftables
## in network namespaces of their own, a rolling restart) with more rounds than make test's 2
## (ROUNDS=N, up to 50); the partitions need root and nft (scripts/nemesis-nft installs it)
nemesis:
	@scripts/nemesis-nft
	FELIX_NEMESIS_ROUNDS=$(ROUNDS) $(GO) test -count=1 -timeout 90m -run 'LeaderProcess|PartitionedLeader|RollingRestart' -v ./cmd/felix

## sim: the deterministic cluster simulation for SEEDS seeds from FIRST (a few minutes by
## default); a failing seed prints its report and FELIX_SIM_SEED=<seed> to replay it
SEEDS ?= 2000
FIRST ?= 1
.PHONY: sim sim-long
sim:
	FELIX_SIM_SEEDS=$(SEEDS) FELIX_SIM_FIRST=$(FIRST) $(GO) test -count=1 -timeout 60m -run 'TestSimulation$$' -v ./sim

## sim-long: 20000 seeds (about half an hour), and how often a replay differs over 200 seeds
sim-long:
	FELIX_SIM_SEEDS=20000 FELIX_SIM_FIRST=$(FIRST) $(GO) test -count=1 -timeout 120m -run 'TestSimulation$$' -v ./sim
	FELIX_SIM_REPLAYS=2 FELIX_SIM_SEEDS=200 FELIX_SIM_FIRST=$(FIRST) $(GO) test -count=1 -timeout 30m -run 'TestReplayDivergence$$' -v ./sim

## soak: the long crash and kill -9 loops
soak:
	FELIX_SOAK=1 $(GO) test -race -timeout 60m -run 'Soak|Crash|Kill' ./...

clean:
	rm -rf bin $(DATA) $(CLUSTER_DIR)
