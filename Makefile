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

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show the targets
	@awk 'BEGIN {FS = ":.*?## "} /^[a-zA-Z_-]+:.*?## / {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kubectl-deltas
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-deltas ./cmd/kubectl-deltas

.PHONY: controlplane
controlplane: $(BIN)/kube-apiserver $(BIN)/etcd $(BIN)/kubectl ## Build kube-apiserver, etcd and kubectl from the Go module proxy into bin/ (once)

$(BIN)/kube-apiserver: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $(BIN)/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/kubectl: hack/controlplane/go.mod hack/controlplane/go.sum
	cd hack/controlplane && $(GO) build -ldflags "$(KUBE_LDFLAGS) $(KUBECTL_LDFLAGS)" -o $(BIN)/kubectl k8s.io/kubernetes/cmd/kubectl

$(BIN)/etcd: hack/controlplane/go.mod hack/controlplane/go.sum hack/controlplane/etcd/main.go
	cd hack/controlplane && $(GO) build -o $(BIN)/etcd ./etcd

.PHONY: demo
demo: build controlplane ## Start a local control plane, watch ConfigMaps with kubectl deltas while a writer changes them
	$(GO) run ./hack/demo

.PHONY: test
test: controlplane ## Unit and end-to-end tests (race detector on), with the coverage of internal/cache
	$(GO) test -race -count=1 -coverprofile=$(BIN)/cache.cover ./internal/cache/
	@$(GO) tool cover -func=$(BIN)/cache.cover | awk '/^total:/ {print "internal/cache coverage: " $$3}'
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /internal/cache$$)

.PHONY: unit
unit: ## Unit tests only (no control plane)
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /e2e -e /internal/controlplane)

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 20s)
	$(GO) test -run='^$$' -fuzz='^FuzzDeltaFIFODifferential$$' -fuzztime=$(FUZZTIME) ./internal/cacheconformance/
	$(GO) test -run='^$$' -fuzz='^FuzzDiffApply$$' -fuzztime=$(FUZZTIME) ./internal/diff/
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./internal/rawobj/

.PHONY: lint
lint: ## go vet, gofmt and go mod tidy checks
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@cp go.mod /tmp/deltas-go.mod.bak && cp go.sum /tmp/deltas-go.sum.bak && $(GO) mod tidy && \
		if ! git diff --quiet -- go.mod go.sum; then echo "go mod tidy changed go.mod/go.sum"; git --no-pager diff -- go.mod go.sum; \
		cp /tmp/deltas-go.mod.bak go.mod; cp /tmp/deltas-go.sum.bak go.sum; exit 1; fi

.PHONY: clean
clean: ## Remove build outputs (keeps the control plane binaries)
	rm -f $(BIN)/kubectl-deltas $(BIN)/*.cover
	rm -rf dist
