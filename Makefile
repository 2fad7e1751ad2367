# lvms-rebase build, test and repo tooling. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/lvms-rebase/lvms-rebase/internal/version.Version=$(VERSION)
BIN       := _output/bin/lvms-rebase
# Control-plane binaries for the applier tests, built from the Go module proxy once per version.
TOOLS_DIR ?= $(CURDIR)/_output/tools
K8S_VERSION  ?= v1.37.0
ETCD_VERSION ?= v3.7.0
KUBEBUILDER_ASSETS ?= $(TOOLS_DIR)/k8s-$(K8S_VERSION)-etcd-$(ETCD_VERSION)
export KUBEBUILDER_ASSETS
# The stock kustomize CLI rebase/render's parity test builds the staged overlays with (the release
# of the kustomize/api in go.mod; hack/build-kustomize.sh checks the pair), built once per version.
KUSTOMIZE_VERSION ?= v5.8.2
KUSTOMIZE_BIN ?= $(TOOLS_DIR)/kustomize-$(KUSTOMIZE_VERSION)/kustomize
export KUSTOMIZE_BIN
# The end-to-end packages build the binary (with failpoints) and run real processes; on a loaded
# 2-core machine that exceeds go test's 10-minute default, which is a budget, not a speed goal.
GOTEST_FLAGS ?= -timeout 40m

.PHONY: help build test test-unit test-compat control-plane kustomize demo verify lint bench fixtures clean fuzz microshift-tables api-snapshot

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the lvms-rebase binary into _output/bin
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/lvms-rebase

control-plane: ## build etcd + kube-apiserver for the applier tests (cached by version)
	K8S_VERSION=$(K8S_VERSION) ETCD_VERSION=$(ETCD_VERSION) OUT_DIR=$(KUBEBUILDER_ASSETS) hack/build-control-plane.sh

kustomize: ## build the stock kustomize CLI for the render parity test (cached by version)
	KUSTOMIZE_VERSION=$(KUSTOMIZE_VERSION) OUT_DIR=$(patsubst %/,%,$(dir $(KUSTOMIZE_BIN))) hack/build-kustomize.sh

test: control-plane kustomize ## run every test, including the applier and apply against a real kube-apiserver
	CGO_ENABLED=0 $(GO) build ./...
	$(GO) test $(GOTEST_FLAGS) ./...
	cd applier && CGO_ENABLED=0 $(GO) build ./... && $(GO) test $(GOTEST_FLAGS) ./...
	GOTEST_FLAGS='$(GOTEST_FLAGS)' hack/test-consumer.sh

test-unit: ## run the tests that need no control plane
	$(GO) test $(GOTEST_FLAGS) -short ./...
	cd applier && $(GO) test $(GOTEST_FLAGS) -short ./...

test-compat: ## build, vet and -short test the applier at its go.mod's (oldest) versions, with client-go v0.30, v0.33, v0.36, v0.37, and newest
	hack/test-compat.sh

MICROSHIFT_REFERENCE ?= ../shared/reference/microshift
microshift-tables: ## regenerate the MicroShift requirement and symbol tables from a MicroShift reference copy
	$(GO) run ./hack/genmicroshift -reference $(MICROSHIFT_REFERENCE)

api-snapshot: ## rewrite the applier API baseline hack/applier-api.export (when releasing; RELEASING.md)
	hack/verify-api.sh -update

demo: build ## run the main job on the bundled fixtures over a loopback registry
	$(GO) build -o _output/bin/dev-registry ./hack/dev-registry
	hack/demo.sh

verify: ## gofmt, go vet, go mod tidy, golangci-lint, generated files, applier API compatibility, import graph
	hack/verify-gofmt.sh
	hack/verify-imports.sh
	$(GO) vet ./...
	cd applier && $(GO) vet ./...
	hack/verify-gomod.sh
	TOOLS_DIR=$(TOOLS_DIR) hack/verify-golangci-lint.sh
	hack/verify-fixtures.sh
	hack/verify-api.sh

# golangci-lint (hack/tools/go.mod) is built once per version into $(TOOLS_DIR); not part of
# `make test`, whose CI runs would otherwise pay its cold build (minutes on 2 cores).
lint: ## golangci-lint (.golangci.yml) over every module; LINT_FLAGS=--fix applies suggested fixes
	TOOLS_DIR=$(TOOLS_DIR) hack/verify-golangci-lint.sh $(LINT_FLAGS)

bench: build ## benchmarks: full two-arch rebase vs stock tools, fetch byte counters, applier
	hack/bench.sh

fixtures: ## regenerate the fixture images under testdata/
	hack/update-fixtures.sh

fuzz: ## run each fuzz target briefly (FUZZTIME=30s)
	hack/fuzz.sh

clean: ## remove build output (keeps the control-plane cache unless CLEAN_TOOLS=1)
	rm -rf _output/bin _output/demo
	if [ "$${CLEAN_TOOLS:-0}" = 1 ]; then rm -rf $(TOOLS_DIR); fi
