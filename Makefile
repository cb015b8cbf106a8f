# kubectl deltas — developer entry points. `make help` lists them.

SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
MODULE := github.com/kubectl-deltas/kubectl-deltas

KUBE_VERSION := v1.36.3
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w \
	-X $(MODULE)/internal/version.version=$(VERSION) \
	-X $(MODULE)/internal/version.commit=$(COMMIT) \
	-X $(MODULE)/internal/version.date=$(DATE)
KUBE_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=36
KUBECTL_LDFLAGS := \
	-X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=36

# Fuzz time per target in `make fuzz` (CI runs them briefly).
FUZZTIME ?= 20s

# Release and lint tools, pinned, built from the Go module proxy into
# hack/tools/bin (git-ignored) the first time they are needed. The version is
# in the file name, so changing it here installs the new one.
# goreleaser: v2.18+ needs Go 1.27; v2.16 and v2.17 depend on a go-msix
# module the module proxy refuses, so v2.15.1 is the newest that builds here.
TOOLS_BIN := $(CURDIR)/hack/tools/bin
GORELEASER_VERSION := v2.15.1
GOLANGCI_LINT_VERSION := v2.15.0
GORELEASER := $(TOOLS_BIN)/goreleaser-$(GORELEASER_VERSION)
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
# deadcode lists the functions the binary never reaches: none may be left.
DEADCODE_VERSION := v0.52.0
DEADCODE := $(TOOLS_BIN)/deadcode-$(DEADCODE_VERSION)
# krew's validate-krew-manifest and krew are pinned in the tools module
# hack/tools (go.mod's tool lines; change the version there with
# "go get -tool sigs.k8s.io/krew/cmd/krew@vX.Y.Z" in hack/tools).
KREW_VERSION := $(shell awk '$$1 == "sigs.k8s.io/krew" {print $$2}' hack/tools/go.mod)
VALIDATE_KREW_MANIFEST := $(TOOLS_BIN)/validate-krew-manifest-$(KREW_VERSION)
KREW := $(TOOLS_BIN)/krew-$(KREW_VERSION)

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show the targets
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kubectl-deltas as releases are built (static, no cgo)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-deltas ./cmd/kubectl-deltas

.PHONY: controlplane
controlplane: $(BIN)/kube-apiserver $(BIN)/etcd $(BIN)/etcdutl $(BIN)/kubectl $(BIN)/kube-controller-manager $(BIN)/kube-scheduler $(BIN)/kwok $(BIN)/kwok-stages.yaml $(BIN)/kwok-clusterlogs-crd.yaml ## Build the local control plane (kube-apiserver, etcd and etcdutl, kubectl, kube-controller-manager, kube-scheduler, kwok) from the Go module proxy into bin/ (once)

# Kubernetes' binaries come from k8s.io/kubernetes, pinned in
# hack/controlplane/go.mod; kwok from sigs.k8s.io/kwok, pinned in its own
# module hack/kwok/go.mod because its dependencies differ.
$(BIN)/kube-apiserver: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/kube-controller-manager: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(BIN)/kube-scheduler: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(BIN)/kubectl: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS) $(KUBECTL_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kubectl

$(BIN)/etcd: hack/controlplane/go.mod hack/controlplane/go.sum hack/controlplane/etcd/main.go
	cd hack/controlplane && $(GO) build -o $@ ./etcd

# etcdutl restores etcd snapshots (the etcd-restore scenarios of
# make e2e-faults), at the etcd version of hack/controlplane; its own module
# keeps its dependencies out of the Kubernetes build.
$(BIN)/etcdutl: hack/etcdutl/go.mod hack/etcdutl/go.sum
	cd hack/etcdutl && $(GO) build -o $@ go.etcd.io/etcd/etcdutl/v3

$(BIN)/kwok: hack/kwok/go.mod hack/kwok/go.sum
	cd hack/kwok && $(GO) build -ldflags "-s -w" -o $@ sigs.k8s.io/kwok/cmd/kwok

# kwok's node and pod stages (initialize and heartbeat nodes; make Pods
# Ready, complete and delete them at once) ship in its module; the
# project's own hack/kwok/pod-crashloop.yaml adds a Pod that fails
# (CrashLoopBackOff) for the tests of --fail-when. kwok reads one YAML
# stream, so they are joined with "---" lines: the files do not start with
# one, and a plain cat would merge their documents.
KWOK_STAGES := node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
	pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml
$(BIN)/kwok-stages.yaml: hack/kwok/go.mod hack/kwok/go.sum hack/kwok/pod-crashloop.yaml
	@mkdir -p $(BIN)
	cd hack/kwok && $(GO) mod download sigs.k8s.io/kwok && \
		dir=$$($(GO) list -m -f '{{.Dir}}' sigs.k8s.io/kwok) && test -n "$$dir" && \
		{ for f in $(KWOK_STAGES); do echo '---'; cat "$$dir/kustomize/stage/$$f" || exit 1; echo; done; \
		  echo '---'; cat pod-crashloop.yaml; } > $@.tmp
	mv $@.tmp $@

# kwok's ClusterLogs CRD, from its module: busy clusters install it, and
# kwok's kubelet server answers container logs as ClusterLogs objects say.
$(BIN)/kwok-clusterlogs-crd.yaml: hack/kwok/go.mod hack/kwok/go.sum
	@mkdir -p $(BIN)
	cd hack/kwok && $(GO) mod download sigs.k8s.io/kwok && \
		dir=$$($(GO) list -m -f '{{.Dir}}' sigs.k8s.io/kwok) && test -n "$$dir" && \
		cp "$$dir/kustomize/crd/bases/kwok.x-k8s.io_clusterlogs.yaml" $@.tmp
	chmod 644 $@.tmp && mv $@.tmp $@

# A minimal OpenTelemetry Collector (OTLP receiver, batch processor, file
# exporter) for the end-to-end tests of the OTLP output, built from the
# collector's own modules pinned in hack/otelcol/go.mod, a module of its own
# so they stay out of the plugin's go.mod. Its config: hack/otelcol/collector.yaml.
.PHONY: otelcol
otelcol: $(BIN)/otelcol ## Build the end-to-end tests' OpenTelemetry Collector into bin/otelcol (once)

$(BIN)/otelcol: hack/otelcol/go.mod hack/otelcol/go.sum hack/otelcol/main.go
	cd hack/otelcol && $(GO) build -ldflags "-s -w" -o $@ .

.PHONY: demo
demo: build controlplane ## A Deployment rolls out, scales and goes on a busy local cluster while kubectl deltas watches (under a minute)
	$(GO) run ./hack/demo

.PHONY: test
test: need-jq need-chromium controlplane $(BIN)/otelcol $(VALIDATE_KREW_MANIFEST) $(KREW) ## Unit and end-to-end tests (race detector on), with the coverage of internal/cache
	$(GO) test -race -count=1 -coverprofile=$(BIN)/cache.cover ./internal/cache/
	@$(GO) tool cover -func=$(BIN)/cache.cover | awk '/^total:/ {print "internal/cache coverage: " $$3}'
	DELTAS_VALIDATE_KREW_MANIFEST=$(VALIDATE_KREW_MANIFEST) DELTAS_KREW=$(KREW) \
		$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /internal/cache$$)

.PHONY: need-jq
need-jq:
	@command -v jq >/dev/null || { echo "error: the tests need jq: install it (apt-get install jq, brew install jq) and run again" >&2; exit 1; }

.PHONY: need-chromium
need-chromium:
	@[ -n "$$DELTAS_CHROMIUM" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || { echo "error: the timeline page's tests need Chromium: install it (apt-get install chromium), or name one with DELTAS_CHROMIUM=/path/to/chrome, and run again" >&2; exit 1; }

.PHONY: unit
unit: need-jq need-chromium ## Unit tests only (no control plane)
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /e2e -e /test/controlplane -e /test/otelcol)

.PHONY: e2e-faults
e2e-faults: controlplane $(BIN)/otelcol ## Fault-injection end-to-end suite: apiserver kills, compaction, proxy faults, etcd restores, two apiservers, revoked rights, expiring credentials, large objects, churn, slow reader, signals, bad input, secrets, rollouts on a busy cluster, the timeline page in a browser
	$(GO) vet -tags faults ./e2e/
	$(GO) test -race -tags faults -count=1 -timeout 40m -run '^Test(Fault|Busy|Browser|RightsRevoked)' -v ./e2e/

.PHONY: e2e-churn
e2e-churn: controlplane ## Churn at scale on the busy cluster (issue 14): 50,000 Pods, 500 writes/s for 2 minutes, kube-apiserver killed and etcd compacted mid-way (CI runs it at 1,000 Pods)
	DELTAS_CHURN_PODS=$(or $(PODS),50000) DELTAS_CHURN_RATE=$(or $(RATE),500) DELTAS_CHURN_SECONDS=$(or $(CHURN_SECONDS),120) \
		$(GO) test -tags faults -count=1 -timeout 90m -run '^TestBusyChurnAtScale$$' -v ./e2e/

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 20s)
	GO=$(GO) hack/fuzz.sh ./internal/cacheconformance/ FuzzDeltaFIFODifferential $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/diff/ FuzzDiffApply $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/rawobj/ FuzzParse $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/rawobj/ FuzzParseListFrom $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/printer/ FuzzRowCells $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/rawobj/ FuzzNextEvent $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/rawobj/ FuzzEachValidMember $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/stage/ FuzzChangeWalker $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/rawobj/ FuzzDecodeValue $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/timeline/ FuzzDiffBytes $(FUZZTIME)
	GO=$(GO) hack/fuzz.sh ./internal/timeline/ FuzzAppendRawText $(FUZZTIME)

.PHONY: lint
lint: $(GOLANGCI_LINT) $(DEADCODE) ## golangci-lint (.golangci.yml), go vet, deadcode, gofmt and go mod tidy checks
	$(GOLANGCI_LINT) run ./...
	$(GO) vet ./...
	@out=$$($(DEADCODE) ./cmd/kubectl-deltas); if [ -n "$$out" ]; then echo "unreachable from the binary (a test-only helper belongs in a _test.go file):"; echo "$$out"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@cp go.mod /tmp/deltas-go.mod.bak && cp go.sum /tmp/deltas-go.sum.bak && $(GO) mod tidy && \
		if ! git diff --quiet -- go.mod go.sum; then echo "go mod tidy changed go.mod/go.sum"; git --no-pager diff -- go.mod go.sum; \
		cp /tmp/deltas-go.mod.bak go.mod; cp /tmp/deltas-go.sum.bak go.sum; exit 1; fi

.PHONY: clean
clean: ## Remove build outputs (keeps the control plane binaries)
	rm -f $(BIN)/kubectl-deltas $(BIN)/*.cover
	rm -rf dist

# AB is the tree the A/B section of make bench measures this one against:
# e6e90b4, the tree before the CEL environment, health and the flag groups.
AB ?= e6e90b4

.PHONY: bench
bench: build controlplane otelcol ## Benchmark vs raw HTTP, client-go and kubectl on a local control plane, A/B against the tree AB, recording and replay, waiting, export to OpenTelemetry (N=10000 M=1000 ROUNDS=5 AB=e6e90b4): bench/RESULTS.md
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -m $(or $(M),1000) -rounds $(or $(ROUNDS),5) -ab $(AB) -replay -conditions -history -otlp

.PHONY: bench-ab
bench-ab: build controlplane ## Only the A/B section of make bench: this tree against AB (e6e90b4), an empty snapshot and N ConfigMaps with health off (ROUNDS=5)
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -rounds $(or $(ROUNDS),5) -ab $(AB) -ab-only

.PHONY: bench-replay
bench-replay: build controlplane ## Only the recording section of make bench: --record against -o json, --replay and --at against jq, replay memory, the --timeline page of 50,000 deltas (N=10000 ROUNDS=5; needs chromium)
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -rounds $(or $(ROUNDS),5) -replay -replay-only

.PHONY: bench-conditions
bench-conditions: build controlplane ## Only the waiting section of make bench: --until and --fail-when (health, JSONPath, CEL) on a replay of 3,000 ConfigMaps and 3,000 updates, --fail-when live on N ConfigMaps under churn (N=10000 ROUNDS=5)
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -rounds $(or $(ROUNDS),5) -conditions -conditions-only

.PHONY: bench-history
bench-history: build controlplane ## Only the recording-directory section of make bench: --at and --from/--to in a generated day of 5,000 Pods (RECORDS=10000000) against 100,000 records, its summary, a directory against one file under churn, a recorder's RSS after 5,000 and 100,000 updates (N=10000 ROUNDS=5)
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -rounds $(or $(ROUNDS),5) -history -history-only -history-records $(or $(RECORDS),10000000)

.PHONY: bench-otlp
bench-otlp: build controlplane otelcol ## Only the OpenTelemetry section of make bench (issue 60): --otlp to bin/otelcol against -o json > file, N ConfigMaps listed and under churn, the records the collector received, the binary's growth since 9174f09 (N=10000 ROUNDS=5)
	GO=$(GO) $(GO) run ./bench/harness -n $(or $(N),10000) -rounds $(or $(ROUNDS),5) -otlp -otlp-only

.PHONY: bench-live
bench-live: ## --live's cost: a 200-object tree at 10 deltas/s, the share of one core and the bytes written per second (target ≤ 5%)
	$(GO) test -run '^$$' -bench BenchmarkView200At10PerSecond -benchtime 3s ./internal/live/

.PHONY: bench-scale
# RATES holds a comma, which $(or …) would split: the default lives in its own variable.
RATES ?= 1000,max
bench-scale: build controlplane ## Scale benchmark: N realistic Pods on kwok nodes, initial sync and churn (N=50000 ROUNDS=1 CHURN=60s RATES=1000,max; N=150000 needs ~20 GB free; RATES= for no churn; BENCH_FLAGS='-only d-json,d-meta,d-all -tag issue12' for some clients, kept beside the full run): bench/RESULTS.md
	GO=$(GO) $(GO) run ./bench/harness -scale -n $(or $(N),50000) -rounds $(or $(ROUNDS),1) -churn-for $(or $(CHURN),60s) -churn-rates '$(RATES)' $(BENCH_FLAGS)

.PHONY: bench-events
bench-events: build controlplane ## --events on a busy namespace (issue 22): 1,000 Events/s, 1 in 100 about a watched object (CHURN=60s): bench/RESULTS.md
	GO=$(GO) $(GO) run ./bench/harness -events -churn-for $(or $(CHURN),60s) $(BENCH_FLAGS)

$(GORELEASER):
	rm -rf $(TOOLS_BIN)/.goreleaser && mkdir -p $(TOOLS_BIN)/.goreleaser
	GOBIN=$(TOOLS_BIN)/.goreleaser $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mv $(TOOLS_BIN)/.goreleaser/goreleaser $@ && rm -rf $(TOOLS_BIN)/.goreleaser

$(GOLANGCI_LINT):
	rm -rf $(TOOLS_BIN)/.golangci-lint && mkdir -p $(TOOLS_BIN)/.golangci-lint
	GOBIN=$(TOOLS_BIN)/.golangci-lint $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_BIN)/.golangci-lint/golangci-lint $@ && rm -rf $(TOOLS_BIN)/.golangci-lint

$(DEADCODE):
	rm -rf $(TOOLS_BIN)/.deadcode && mkdir -p $(TOOLS_BIN)/.deadcode
	GOBIN=$(TOOLS_BIN)/.deadcode $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)
	mv $(TOOLS_BIN)/.deadcode/deadcode $@ && rm -rf $(TOOLS_BIN)/.deadcode

$(VALIDATE_KREW_MANIFEST): hack/tools/go.mod hack/tools/go.sum
	rm -rf $(TOOLS_BIN)/.validate-krew-manifest && mkdir -p $(TOOLS_BIN)/.validate-krew-manifest
	cd hack/tools && GOBIN=$(TOOLS_BIN)/.validate-krew-manifest $(GO) install sigs.k8s.io/krew/cmd/validate-krew-manifest
	mv $(TOOLS_BIN)/.validate-krew-manifest/validate-krew-manifest $@ && rm -rf $(TOOLS_BIN)/.validate-krew-manifest

$(KREW): hack/tools/go.mod hack/tools/go.sum
	rm -rf $(TOOLS_BIN)/.krew && mkdir -p $(TOOLS_BIN)/.krew
	cd hack/tools && GOBIN=$(TOOLS_BIN)/.krew $(GO) install sigs.k8s.io/krew/cmd/krew
	mv $(TOOLS_BIN)/.krew/krew $@ && rm -rf $(TOOLS_BIN)/.krew

.PHONY: tools
tools: $(GORELEASER) $(GOLANGCI_LINT) $(VALIDATE_KREW_MANIFEST) $(KREW) ## Install the pinned goreleaser, golangci-lint and krew tools into hack/tools/bin

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install the pinned golangci-lint into hack/tools/bin

# goreleaser reads the commit from git and gives up on it without a remote;
# a clone without one gets the project's URL, for goreleaser's run only.
DIST_GIT_ENV := $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://$(MODULE).git)

.PHONY: dist
dist: $(GORELEASER) ## Local snapshot release with goreleaser: every archive and checksums.txt in dist/ (slow: 6 cross builds)
	$(DIST_GIT_ENV) $(GORELEASER) release --snapshot --clean

.PHONY: release-check
release-check: $(GORELEASER) ## goreleaser check, then the krew manifest tests (a host archive built as goreleaser would)
	$(GORELEASER) check
	$(MAKE) validate-krew-manifest

.PHONY: validate-krew-manifest
validate-krew-manifest: $(VALIDATE_KREW_MANIFEST) $(KREW) ## krew's validate-krew-manifest on plugin.yaml, agreement with .krew.yaml and .goreleaser.yaml, krew install from local archives (DIST=dist: make dist's archives too)
	DELTAS_VALIDATE_KREW_MANIFEST=$(VALIDATE_KREW_MANIFEST) DELTAS_KREW=$(KREW) $(if $(DIST),DELTAS_DIST=$(DIST)) \
		$(GO) test -count=1 $(if $(DIST),-tags dist) -run 'Manifest|Krew' ./hack/krew/

.PHONY: krew-manifest
krew-manifest: $(VALIDATE_KREW_MANIFEST) ## Render plugin.yaml from .krew.yaml and validate it (TAG=v1.2.3 CHECKSUMS=checksums.txt after a release)
	$(GO) run ./hack/krew/cmd/render-manifest -validate-krew-manifest $(VALIDATE_KREW_MANIFEST) $(if $(TAG),-tag $(TAG)) $(if $(CHECKSUMS),-checksums $(CHECKSUMS))
