# The kit's tasks. Everything needs only Go; modules come from the proxy.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

GO      ?= go
OUTPUT  ?= _output
PKGS    ?= ./...

.PHONY: all test test-real real-host real-hostprocess real-kubeletruntime test-release test-kit test-consumer test-examples test-vk test-k8s test-k8s-all e2e conformance soak loaded bench cover lint tidy-check replace-block suite-times tier-times kuscia-cite release-check

all: lint test

## The kit's own checks come in three tiers, each with a budget (README,
## "The kit's own checks"):
##   make test       the first tier, what a contributor runs before every
##                   commit: vet of every module, the unit tests, the fake's
##                   gate, every fake mutant and benign variant (virtual
##                   time), the vk suite's self-tests, the consumers' and
##                   examples' gates but those on real processes;
##   make test-real  the second tier: what runs real processes on the real
##                   clock (the conformance self-tests on hostprocess, the
##                   hostprocess example, the kubelet's runtime manager over
##                   crisim), then test-k8s-all, what another Kubernetes
##                   release can change;
##   make e2e        the third: containerd and a real API server.
## .ci/run runs all three.
##
## test: vet and race-test (RACE= without -race): test-kit, the kit's own
## packages but examples/hostprocess, without the conformance self-tests
## named TestHost* (REAL_TESTS), suite/, the kubelet-free module of what
## the KRI and VK suites share (verdict, gate, summary, ExpectedFailures,
## flags), and sim/, the kubelet-free module of the kit's simulations
## (sim/workload: the command vocabulary and the pod simulation;
## sim/apiserver: the fake API server of vk and examples/kubebackend);
## test-consumer, the example consumer module (testdata/consumer),
## which gates its own provider on the conformance suite; test-examples,
## examples/kubeletruntime's vet (a module of its own, so that the kubelet
## runtime manager's dependencies stay out of the kit's module graph; its
## tests are test-real's) and the unit tests of hack/e2e/apiserver (e2ectl;
## its ./etcd, etcd's entry point, is left to 'make e2e', which builds it);
## test-vk. examples/kubebackend, a package of the kit (client-go is a
## dependency already), leaves its real-API-server test
## (KRI_E2E_KUBECONFIG) to make e2e.
# vet gets -race too so that it type-checks against the same compiled
# dependencies as the tests: a cold machine then builds k8s.io/kubernetes
# once, not twice.
RACE ?= -race
test: test-kit test-consumer test-examples test-vk

# Ginkgo colours its output only where a recipe's standard output is a
# terminal: a file or a CI log gets GINKGO_NO_COLOR, which its formatter
# honours in every process that inherits it (go test's helper processes,
# the Ginkgo CLI and its test processes). Prefixed to each recipe that runs
# a suite.
COLOR := [ -t 1 ] || export GINKGO_NO_COLOR=TRUE;

# The second tier's share of the kit's module: the package that runs real
# processes, and the conformance self-tests on it.
REAL_PKGS  := ./examples/hostprocess
REAL_TESTS := ^TestHost

test-kit:
	$(GO) vet $(RACE) $(PKGS)
	$(COLOR) KRI_E2E_KUBECONFIG= $(GO) test $(RACE) -timeout 20m -skip '$(REAL_TESTS)' $$($(GO) list $(PKGS) | grep -v -x -F "$$($(GO) list $(REAL_PKGS))")
	cd suite && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) ./...
	cd sim && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) ./...

test-consumer:
	$(COLOR) cd testdata/consumer && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) ./...

test-examples:
	cd examples/kubeletruntime && $(GO) vet $(RACE) ./...
	cd hack/e2e/apiserver && $(GO) vet $(RACE) . ./e2ectl && KRI_E2E_KUBECONFIG= $(GO) test $(RACE) . ./e2ectl

## test-real: the second tier (real processes on the real clock): its three
## parts at once (REAL_JOBS, default 3; their outputs one after the other,
## each whole when it ends), then test-k8s-all. The parts: real-host, the
## conformance self-tests on hostprocess (TestHostMutantsAreCaught, each
## host mutant's run focused on its spec groups; TestHostBenignVariantsPass;
## TestHostMutantsInterceptEveryMethod); real-hostprocess, the hostprocess
## example's tests and its gate; real-kubeletruntime, examples/kubeletruntime's
## (the kubelet's runtime manager as a provider, over crisim). Each waits
## mostly on real probe periods, grace periods and restarts, not on the CPU:
## one after the other they took 455 s of test-real's 543 s (quiet, 2 cores).
REAL_JOBS ?= 3
test-real:
	$(MAKE) -j$(REAL_JOBS) --output-sync=target real-host real-hostprocess real-kubeletruntime
	$(MAKE) test-k8s-all RACE=

real-host:
	$(COLOR) $(GO) test $(RACE) -timeout 20m -run '$(REAL_TESTS)' ./conformance/

real-hostprocess:
	$(COLOR) $(GO) test $(RACE) -timeout 20m $(REAL_PKGS)/...

real-kubeletruntime:
	$(COLOR) cd examples/kubeletruntime && KRI_E2E_CRI_ENDPOINT= $(GO) test $(RACE) -timeout 20m ./...

## test-vk: the virtual-kubelet provider suite, vk/, a module of its own
## (virtual-kubelet v1.13.0, no k8s.io/kubernetes): its self-tests (the
## reference provider passes, every mutant fails exactly its specs, every
## benign variant passes; virtual time, seconds), then the two VK providers'
## modules gated on it, testdata/vkconsumer (a provider's module that runs
## the suite with no replace block) and examples/vkremote (an async provider
## in front of a remote service over HTTP), and a check that their build
## lists have no k8s.io/kubernetes.
VK_PROVIDER_MODULES := testdata/vkconsumer examples/vkremote
# The vk suite's zoo: every mutant and benign variant is a run of the whole
# suite (VK's controllers, the fake API server, the provider) in a synctest
# bubble. They judge verdicts, not data races, and the race detector
# tripled their CPU (vk under -race: 439 s at load 9, the zoo alone 102 s
# without it): they run without -race, as the conformance zoo's helper
# processes do; the suite itself runs under -race in every other test of
# the package (TestReferenceProviderPassesEverySpec: every spec, sync and
# async).
VK_ZOO := ^(TestMutantsFailExactlyTheirSpecs|TestBenignVariantsPass)$$
test-vk:
	$(COLOR) cd vk && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -timeout 20m -skip '$(VK_ZOO)' ./... && $(GO) test -timeout 20m -run '$(VK_ZOO)' .
	$(COLOR) for m in $(VK_PROVIDER_MODULES); do (cd $$m && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) ./...) || exit 1; done
	for m in $(VK_PROVIDER_MODULES); do mods="$$(cd $$m && $(GO) list -m all)" && if grep -E '^(k8s.io/kubernetes|github.com/kri-kit/testkit) ' <<<"$$mods"; then \
	  echo "$$m needs the module(s) above: a VK provider's module must not" >&2; exit 1; fi; done

## test-k8s: run K8S_TARGETS (default test-release: what a Kubernetes
## release can change) against another Kubernetes release,
## K8S_VERSION=v1.x.y, on a copy of the
## repository under $(OUTPUT)/k8s-<version> whose go.mod files are rewritten
## to it (hack/test-k8s.sh): the kit's and testdata/consumer's to
## k8s.io/kubernetes at that version, the vk modules' (vk/,
## testdata/vkconsumer, examples/vkremote) to the virtual-kubelet release
## VK_RELEASES names for its minor and k8s.io/api, apimachinery and
## client-go v0.x.y. The kit
## requires the oldest supported release; the README's "Kubernetes
## releases" lists the others. K8S_TARGETS='test-kit test-consumer
## test-vk' runs the whole first tier there.
K8S_TARGETS ?= test-release
# The virtual-kubelet release the vk modules are tested on, per Kubernetes
# minor: the VK release built on it. VK v1.13.0 is on k8s.io/* 0.35 (the
# pin), v1.14.1 on 0.37. No VK release the module proxy serves is on 0.36
# (it serves v1.13.0 and v1.14.1, not v1.13.1 or v1.14.0): a provider's
# module on 1.36 keeps v1.13.0 and Go's minimal version selection gives it
# k8s.io/* 0.36, so 1.36 is tested that way.
VK_RELEASES ?= 1.35=v1.13.0 1.36=v1.13.0 1.37=v1.14.1
test-k8s:
	@if [ -z "$(K8S_VERSION)" ]; then echo "usage: make test-k8s K8S_VERSION=v1.x.y [K8S_TARGETS='test-kit test-consumer test-vk'] [RACE=]" >&2; exit 2; fi
	$(COLOR) OUTPUT=$(abspath $(OUTPUT)) GO=$(GO) VK_RELEASES="$(VK_RELEASES)" VK_MODULES="vk $(VK_PROVIDER_MODULES)" \
		bash hack/test-k8s.sh $(K8S_VERSION) $(K8S_TARGETS) RACE=$(RACE)

## test-k8s-all: make test-k8s for every supported release but the pinned
## one (K8S_RELEASES), one after the other; make test-real runs it with
## RACE=.
K8S_RELEASES ?= v1.36.3 v1.37.2
test-k8s-all:
	for v in $(K8S_RELEASES); do $(MAKE) test-k8s K8S_VERSION=$$v; done

## test-release: what a Kubernetes release can change, the default of
## test-k8s: every module moved to the release builds and vets (the kit,
## testdata/consumer, vk/ and its providers' modules), kri/podstatus's
## tests (the kubelet's status rules), internal/kubeletequiv's back-off
## tests (workload's back-off and its figures against the kubelet's), the
## fake's gate
## (TestFakeIsConformant, the suite against the fake) and the vk suite's
## reference provider (TestReferenceProviderPassesEverySpec: VK's own
## controllers of that release). The mutants and variants judge the suite's
## code, which no release changes: they are make test's.
test-release:
	$(GO) vet $(RACE) $(PKGS)
	cd testdata/consumer && $(GO) vet $(RACE) ./...
	$(COLOR) $(GO) test $(RACE) ./kri/podstatus/... && $(GO) test $(RACE) -run '^TestBackOff' ./internal/kubeletequiv/ && $(GO) test $(RACE) -run '^TestFakeIsConformant$$' ./conformance/
	$(COLOR) cd vk && $(GO) vet $(RACE) ./... && $(GO) test $(RACE) -run '^TestReferenceProviderPassesEverySpec$$' .
	for m in $(VK_PROVIDER_MODULES); do (cd $$m && $(GO) vet $(RACE) ./...) || exit 1; done

## e2e: the conformance suite against examples/kubeletruntime over a real
## containerd (needs root; see hack/e2e/run.sh): installs Debian's
## containerd, runc and busybox-static when missing, starts a private
## containerd under /tmp/kri-e2e (KRI_E2E_DIR), builds and imports the
## images, runs the suite and tears everything down. Then builds
## kube-apiserver and etcd from their Go modules (hack/e2e/apiserver),
## starts both on loopback, runs the API server smoke test and the suite
## against examples/kubebackend with KRI_E2E_KUBECONFIG set, and tears them
## down. Both suites run in parallel processes under the Ginkgo CLI of the
## module (KRI_E2E_PROCS, default 3, over containerd;
## KRI_E2E_APISERVER_PROCS, default 4, against the API server). Writes the
## summaries, JUnit reports, logs and timings to
## $(OUTPUT)/e2e. KRI_E2E_PARTS=apiserver runs only the API server part
## (needs no root).
e2e:
	$(COLOR) OUTPUT=$(abspath $(OUTPUT)) GO=$(GO) bash hack/e2e/run.sh

## conformance: run the conformance suite against the fake provider; writes
## the JUnit report $(OUTPUT)/conformance-junit.xml and the human summary
## $(OUTPUT)/conformance-summary.txt (also printed).
conformance:
	mkdir -p $(OUTPUT)
	$(COLOR) $(GO) test -race -count=1 -v -run '^TestFakeIsConformant$$' ./conformance/ -args \
		-ginkgo.junit-report=$(abspath $(OUTPUT))/conformance-junit.xml \
		-kri.summary=$(abspath $(OUTPUT))/conformance-summary.txt

## soak: run the conformance suite SOAK_RUNS times in a row (default 20)
## against the fake and every example provider; fails if any run fails.
SOAK_RUNS ?= 20
soak:
	bash hack/soak.sh $(SOAK_RUNS)

## loaded: run make LOADED_TARGETS (default: test e2e) LOADED_RUNS times
## each (default 3) with LOADED_BURNERS busy loops alongside (default 4, two
## per CPU of a 2-CPU runner), as on a shared CI runner; a line per run,
## logs in $(OUTPUT)/loaded (hack/loaded.sh). Fails if any run fails.
LOADED_TARGETS ?= test e2e
LOADED_RUNS    ?= 3
LOADED_BURNERS ?= 4
loaded:
	OUTPUT=$(abspath $(OUTPUT)) bash hack/loaded.sh $(LOADED_BURNERS) $(LOADED_RUNS) $(LOADED_TARGETS)

## suite-times: run the conformance suite against the fake and every example
## with Ginkgo JSON reports, and print its wall time per spec group.
suite-times:
	mkdir -p $(OUTPUT)
	$(GO) test -count=1 -run '^TestFakeIsConformant$$' ./conformance/ -args -ginkgo.json-report=$(abspath $(OUTPUT))/times-fake.json >/dev/null
	$(GO) test -count=1 -run '^TestConformance$$' ./examples/hostprocess/ -args -ginkgo.json-report=$(abspath $(OUTPUT))/times-hostprocess.json >/dev/null
	cd examples/kubeletruntime && $(GO) test -count=1 -run '^TestConformance$$' . -args -ginkgo.json-report=$(abspath $(OUTPUT))/times-kubeletruntime.json >/dev/null
	$(GO) test -count=1 -run '^TestConformance$$' ./examples/kubebackend/ -args -ginkgo.json-report=$(abspath $(OUTPUT))/times-kubebackend.json >/dev/null
	cd testdata/consumer && $(GO) test -count=1 -run '^TestConformance$$' ./... -args -ginkgo.json-report=$(abspath $(OUTPUT))/times-consumer.json >/dev/null
	$(GO) run ./hack/suitetime $(OUTPUT)/times-*.json

## tier-times: run make test and make test-real (TIERS) and write what each
## tier and each of its packages took to testdata/tier-times.txt, which is
## committed: a change that adds minutes shows in its own diff
## (hack/tier-times.sh).
TIERS ?= test test-real
tier-times:
	OUTPUT=$(abspath $(OUTPUT)) bash hack/tier-times.sh $(TIERS)

## bench: run the benchmarks with allocation figures.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## cover: race-test with coverage; writes $(OUTPUT)/cover.out and prints a summary.
cover:
	mkdir -p $(OUTPUT)
	$(COLOR) $(GO) test -race -coverprofile=$(OUTPUT)/cover.out $(PKGS)
	$(GO) tool cover -func=$(OUTPUT)/cover.out | tail -n 1

## lint: gofmt check and go vet.
lint:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## tidy-check: fail if go.mod/go.sum are not tidy.
tidy-check:
	$(GO) mod tidy -diff
	cd suite && $(GO) mod tidy -diff
	cd sim && $(GO) mod tidy -diff
	cd vk && $(GO) mod tidy -diff
	for m in $(VK_PROVIDER_MODULES); do (cd $$m && $(GO) mod tidy -diff) || exit 1; done

## kuscia-cite: check every kuscia citation of testdata/contract.yaml against
## a kuscia checkout: KUSCIA is a work tree (a directory holding pkg/agent)
## or a git directory, bare or .git, read at HEAD (KUSCIA_REV=<rev> for
## another). Each cited file must declare its function; prints the
## checkout's commit. KUSCIA_RECORD=1 records that commit as kuscia_commit.
kuscia-cite:
	@if [ -z "$(KUSCIA)" ]; then echo "usage: make kuscia-cite KUSCIA=/path/to/kuscia [KUSCIA_REV=HEAD] [KUSCIA_RECORD=1]" >&2; exit 2; fi
	$(GO) run ./hack/kusciacite -kuscia $(KUSCIA) $(if $(KUSCIA_REV),-rev $(KUSCIA_REV)) $(if $(KUSCIA_RECORD),-record)

## replace-block: print the k8s.io replace block a consuming module needs
## (K8S_VERSION=v1.x.y for another release than the one the kit pins).
replace-block:
	@$(GO) run ./hack/replaceblock $(if $(K8S_VERSION),-version $(K8S_VERSION))

## release-check: use the kit as a user does who gets it from a module
## proxy (hack/release-check.sh; the README's "Cutting a release"): builds a
## file GOPROXY from the working tree with suite, sim, the kit and vk at a test
## version, as the tags would publish them after a release commit (go run
## ./hack/release proxy), then from fresh modules that point GOPROXY at it
## runs the README's install lines, go mod tidy, go vet and the gate: a KRI
## consumer (only the k8s.io replace block) on the fake, a VK consumer (no
## replace) with vk.Run on a small provider and no k8s.io/kubernetes in its
## build list. Fails when a published module requires a sibling at a
## version that proxy cannot serve. RELEASE_CHECK_PROXY_FLAGS=-no-bump
## publishes the tree without the release commit, to see it fail; with
## '-no-bump -no-check' the KRI consumer's go mod tidy meets it as a user
## would ("github.com/kri-kit/testkit/suite@v0.1.0: ... not available").
release-check:
	$(COLOR) GO=$(GO) RACE=$(RACE) RELEASE_CHECK_PROXY_FLAGS="$(RELEASE_CHECK_PROXY_FLAGS)" bash hack/release-check.sh
