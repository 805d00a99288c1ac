# cnperf Makefile. Each block belongs to one area; add your targets in your own block.

# ==== core: build, install, test (owner: lead) ====
# make build      build bin/cnperf
# make install    install cnperf into $(GOBIN) (default ~/go/bin)
# make test       unit + integration tests (the README's test command; integration tests that need
#                 root or tools skip with a message when those are missing, listed at the end), then 5 s of fuzzing
#                 the agent's control protocol against a live agent (FuzzServer), then
#                 fuzz-smoke and race (below)
# make check      gofmt + go vet + import layers (test/layers) + lint (golangci-lint) + release-check (actionlint, goreleaser check)
#                 + chart-check (helm lint, helm template = deploy/manifests)
GO ?= go
VERSION ?= v0.1.0-dev
LDFLAGS := -X github.com/cnperf/cnperf/internal/version.Version=$(VERSION)

.PHONY: build install test check
SHELL := /bin/bash

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/cnperf ./cmd/cnperf

install:
	CGO_ENABLED=0 $(GO) install -ldflags "$(LDFLAGS)" ./cmd/cnperf

check: release-check lint chart-check
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./test/layers

# go test's JSON goes through test/testsum: package lines as go test prints them, the output
# of every failed test, every skipped test with its reason (so the log shows which
# tool-dependent tests ran), and "N passed, N failed, N skipped".
test: check
	set -o pipefail; $(GO) test -count=1 -timeout 20m -json ./... | $(GO) run ./test/testsum
	$(GO) test -run '^$$' -fuzz '^FuzzServer$$' -fuzztime 5s ./internal/loadgen/
	$(MAKE) --no-print-directory fuzz-smoke race
# ==== end core ====

# ==== robustness: fuzzing and the race detector (owner: issue 21, docs/design-notes.md) ====
# make fuzz-smoke   every parser's fuzz target for FUZZTIME each (default 3s), seeded with the
#                   real captures in testdata; a failure leaves its input in testdata/fuzz/
# make race         go test -race on the packages that start goroutines
# Variables: FUZZTIME (e.g. FUZZTIME=5m for a long campaign)
FUZZTIME ?= 3s
FUZZ_TARGETS := \
	./internal/driver/native:FuzzParse ./internal/driver/netperf:FuzzParse \
	./internal/driver/iperf3:FuzzParse ./internal/driver/uperf:FuzzParse \
	./internal/driver/qperf:FuzzParse ./internal/driver/sockperf:FuzzParse \
	./internal/driver/iperf2:FuzzParse ./internal/runfile:FuzzReadRuns ./internal/report:FuzzEncode \
	./internal/config:FuzzLoadBytes ./internal/config:FuzzK8sNetperf \
	./internal/config:FuzzTigerBench ./internal/loadgen/control:FuzzDecode
RACE_PACKAGES := ./internal/loadgen/... ./internal/runner/... ./internal/mesh/... \
	./internal/noderes/... ./internal/platform/... ./internal/sink/... ./internal/interrupt/...

.PHONY: fuzz-smoke race

fuzz-smoke:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg > /tmp/cnperf-fuzz.$$$$.log 2>&1 || { cat /tmp/cnperf-fuzz.$$$$.log; rm -f /tmp/cnperf-fuzz.$$$$.log; exit 1; }; \
		grep '^fuzz: elapsed' /tmp/cnperf-fuzz.$$$$.log | tail -n 1; \
	done; rm -f /tmp/cnperf-fuzz.$$$$.log

# -short: the tests that start a real OpenSearch or Prometheus (a minute or more each) ran in
# the plain pass already; under -race the sinks' goroutines are exercised by their unit tests.
race:
	$(GO) test -race -short -count=1 -timeout 20m $(RACE_PACKAGES)
# ==== end robustness ====

# ==== e2e: real multi-node cluster on this machine (owner: test/e2e/harness, docs/e2e.md) ====
# make e2e        build what is missing, start the cluster, run the e2e tests, tear down, check leftovers
# make e2e-up     build what is missing and start a cluster that stays up (for iterating)
# make e2e-test   run the e2e tests against the cluster started by e2e-up
# make e2e-down   tear the cluster down and check that nothing is left
# make e2e-build  build (or find cached) binaries and the images, nothing else
# Variables (environment or make arguments): NODES=2|3 CNI=bridge|flannel|calico|cilium
#   CNI_MODE=vxlan|host-gw (flannel), vxlan (calico), vxlan|native (cilium)
#   NET_MODE=routed|vxlan (bridge) ZONES=1|2 DNS=1|0 IP_FAMILY=ipv4|ipv6|dual (bridge, calico)
#   MULTUS=1 (Multus + whereabouts) KUBEVIRT=1 (KubeVirt in QEMU emulation: kubevirt.sh, needs KUBEVIRT_SRC)
E2E_HARNESS := test/e2e/harness
E2E_STATE ?= /var/lib/cnperf-e2e/state

.PHONY: e2e e2e-up e2e-down e2e-build e2e-test e2e-compare e2e-cnis

e2e:
	$(E2E_HARNESS)/e2e.sh

e2e-build:
	$(E2E_HARNESS)/build-bins.sh
	test/e2e/images/build.sh

e2e-up: e2e-build
	$(E2E_HARNESS)/up.sh
	@echo "cluster is up: . $(E2E_STATE)/e2e.env   (make e2e-test, make e2e-down)"

e2e-test:
	@test -f $(E2E_STATE)/e2e.env || { echo "no cluster: run 'make e2e-up' first" >&2; exit 1; }
	. $(E2E_STATE)/e2e.env && go test -tags e2e ./test/e2e/... -count=1 -v -timeout 40m

# make e2e-compare   make e2e-cnis on a routed and then a vxlan cluster (CNI=flannel: host-gw and
#                    vxlan), short samples
e2e-compare:
	$(E2E_HARNESS)/compare-modes.sh

# make e2e-cnis      the seeds' CNI comparison (deploy/plans/cni-comparison.yaml) on every CNI the
#                    harness brings up, one after the other, then cnperf compare and an HTML
#                    report (docs/cni-comparison.md; CNIS="flannel:vxlan calico:vxlan" for a subset)
e2e-cnis:
	$(E2E_HARNESS)/e2e-cnis.sh

e2e-down:
	$(E2E_HARNESS)/down.sh
	$(E2E_HARNESS)/leftovers.sh check
# ==== end e2e ====

# ==== bench: built-in load generator vs C tools (owner: internal/loadgen, bench/, docs/performance.md) ====
# make bench          compare cnperf's generator with iperf3, sockperf, qperf, iperf 2 and the C
#                     TCP_CRR loop on loopback and a veth pair (root; installs nothing; ~25 min)
# make bench-quick    the same with one repetition and 2 s runs (a smoke test of the harness)
# make bench-go       Go micro-benchmarks of the hot paths (histogram, RR loop, UDP batch send)
# Variables: BENCH_ARGS (e.g. BENCH_ARGS="-only 'TCP_RR' -paths loopback")
BENCH_ARGS ?=

.PHONY: bench bench-quick bench-go

bench:
	$(GO) run ./bench/cmd/bench -reps 3 -duration 3s -warmup 1s $(BENCH_ARGS)

bench-quick:
	$(GO) run ./bench/cmd/bench -reps 1 -duration 2s -warmup 1s $(BENCH_ARGS)

bench-go:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/stats/hdr/ ./internal/loadgen/
# ==== end bench ====

# ==== bench-adaptive: time to a trustworthy answer (owner: internal/runner, bench/cmd/adaptive, docs/performance.md) ====
# make bench-adaptive   the default suite on loopback and TCP_STREAM/RR/CRR on the lab's routed
#                       cross-node path (root), each with fixed 3 samples and with
#                       --confidence 95,5 --samples 3,30, alternating, ADAPTIVE_ROUNDS rounds;
#                       prints wall time and the share of cases within ±5 % at 95 % (~30 min)
# Variables: ADAPTIVE_ROUNDS (default 2), ADAPTIVE_ARGS (e.g. ADAPTIVE_ARGS="-plans loopback -out /tmp/adaptive")
ADAPTIVE_ROUNDS ?= 2
ADAPTIVE_ARGS ?=

.PHONY: bench-adaptive

bench-adaptive: build
	$(GO) run ./bench/cmd/adaptive -cnperf bin/cnperf -rounds $(ADAPTIVE_ROUNDS) $(ADAPTIVE_ARGS)
# ==== end bench-adaptive ====

# ==== release: workflows, goreleaser, krew (owner: .github/workflows, .goreleaser.yaml, docs in README "Install") ====
# make release-check   actionlint on .github/workflows and `goreleaser check` on .goreleaser.yaml
#                      (part of make check); the tools are built from the Go module proxy once,
#                      into $(TOOLS_DIR), and reused while their pinned versions stay the same
# make snapshot        goreleaser's local dry run: every archive, checksums and the krew manifest in dist/
ACTIONLINT_VERSION := v1.7.12
# v2.14.0: the newest goreleaser whose go.mod accepts go 1.26 and whose dependencies the proxy
# serves (v2.18 needs go 1.27.1; v2.17's go.digitalxero.dev/go-msix answers 403)
GORELEASER_VERSION := v2.14.0
TOOLS_DIR ?= $(HOME)/.cache/cnperf-tools
ACTIONLINT := $(TOOLS_DIR)/actionlint-$(ACTIONLINT_VERSION)/actionlint
GORELEASER := $(TOOLS_DIR)/goreleaser-$(GORELEASER_VERSION)/goreleaser

.PHONY: release-check snapshot

$(ACTIONLINT):
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

$(GORELEASER):
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

release-check: $(ACTIONLINT) $(GORELEASER)
	$(ACTIONLINT) -color=false
	$(GORELEASER) check

snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean --skip=sbom
# ==== end release ====

# ==== lint: golangci-lint (owner: .golangci.yml, docs/contributing.md) ====
# make lint   golangci-lint with the curated set of .golangci.yml (part of make check; runs beside
#             other checkouts' lints on this machine); built from
#             the Go module proxy once into $(TOOLS_DIR), like actionlint and goreleaser
# v2.15.0: the newest golangci-lint whose go.mod accepts go 1.26. A cold build takes about
# 180 s of CPU (see docs/contributing.md, "The linter"); a cold lint of the module about 70 s.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

.PHONY: lint

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
# ==== end lint ====

# ==== chart: the Helm chart and the plain manifests made from it (owner: issue 33, docs/always-on.md) ====
# make chart-check   helm lint --strict of deploy/helm/cnperf (defaults, and with a Pushgateway,
#                    labels and extra flags, and with the PrometheusRule and the dashboard), helm
#                    template of the defaults must equal the checked-in deploy/manifests/cnperf.yaml,
#                    and the chart's copies of the alert rules and the Grafana dashboard
#                    deploy/prometheus's and deploy/grafana's (part of make check); helm is built
#                    from the Go module proxy once into $(TOOLS_DIR), like actionlint
# make manifests     rewrite deploy/manifests/cnperf.yaml from the chart, copy the alert rules and
#                    the dashboard (go test ./internal/dashboard -update makes it) into it
HELM_VERSION := v3.22.0
HELM := $(TOOLS_DIR)/helm-$(HELM_VERSION)/helm
CHART := deploy/helm/cnperf
CHART_MANIFEST := deploy/manifests/cnperf.yaml
CHART_RULES := deploy/prometheus/cnperf-rules.yaml
CHART_DASHBOARD := deploy/grafana/cnperf-dashboard.json
CHART_TEMPLATE = { echo "\# Generated from $(CHART) by make manifests (helm template cnperf --namespace cnperf"; \
	echo "\# --set namespace.create=true); do not edit: change the chart, then make manifests."; \
	$(HELM) template cnperf $(CHART) --namespace cnperf --set namespace.create=true; }

.PHONY: chart-check manifests

$(HELM):
	GOBIN=$(dir $@) GOFLAGS=-buildvcs=false $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

chart-check: $(HELM)
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --namespace helm-lint --set pushGateway.url=http://pushgateway.monitoring:9091 \
		--set labels.cluster=prod --set 'extraArgs={--tolerations,*}' --set namespace.create=true
	$(HELM) lint --strict $(CHART) --set prometheusRule.enabled=true --set prometheusRule.labels.release=prom \
		--set grafanaDashboard.enabled=true --set grafanaDashboard.annotations.grafana_folder=Network
	@# the PrometheusRule's spec, un-indented, is a rules file promtool accepts
	@f=$$(mktemp --suffix=.yaml) && $(HELM) template cnperf $(CHART) --set prometheusRule.enabled=true \
		--show-only templates/prometheusrule.yaml | sed -n '/^spec:/,$$p' | sed '1d; s/^  //' > $$f && \
		promtool check rules $$f; rc=$$?; rm -f $$f; exit $$rc
	@$(CHART_TEMPLATE) | diff -u $(CHART_MANIFEST) - || { echo "$(CHART_MANIFEST) is stale: run make manifests"; exit 1; }
	@cmp $(CHART_RULES) $(CHART)/files/cnperf-rules.yaml || { echo "$(CHART)/files/cnperf-rules.yaml is stale: run make manifests"; exit 1; }
	@cmp $(CHART_DASHBOARD) $(CHART)/files/cnperf-dashboard.json || { echo "$(CHART)/files/cnperf-dashboard.json is stale: run make manifests"; exit 1; }

manifests: $(HELM)
	@mkdir -p $(dir $(CHART_MANIFEST)) $(CHART)/files
	cp $(CHART_RULES) $(CHART)/files/cnperf-rules.yaml
	cp $(CHART_DASHBOARD) $(CHART)/files/cnperf-dashboard.json
	$(CHART_TEMPLATE) > $(CHART_MANIFEST)
# ==== end chart ====
