// Package conformance is the Ginkgo v2 suite every KRI provider must pass: it
// checks a kri.PodProvider (PodLifecycleHandler) and a kri.NodeProvider
// against the contracts in the doc comments of package kri.
//
// # Running it
//
// From a plain 'go test', call Run once per test binary with one Config that
// carries both provider factories:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{
//			NewPodProvider: func(ctx context.Context) (kri.PodProvider, error) { return myprovider.New(), nil },
//			Capabilities:   []conformance.Capability{conformance.CapRestartPolicies},
//		})
//	}
//
// Run calls ginkgo.RunSpecs itself, so the -ginkgo.* flags keep working
// (-ginkgo.label-filter, -ginkgo.focus, -ginkgo.junit-report, -ginkgo.v), as
// do the suite's own flags: -kri.timeout-scale=N multiplies every timeout,
// -kri.summary=FILE writes the summary to FILE, -kri.strict and
// -kri.skip-expected-failures set Config.Strict and
// Config.SkipExpectedFailures. With 'go test -v', Run shows the run's
// progress: each spec as it starts, its steps and its outcome and duration
// (Ginkgo's verbose reporter, unless a -ginkgo.v, -ginkgo.vv or
// -ginkgo.succinct flag says otherwise); without -v the go command shows a
// listed package's output only once its tests are over. A test package that
// already has a Ginkgo
// suite registers the specs at package level with DescribePodProvider and
// DescribeNodeProvider instead, and calls RunSpecs itself.
//
// # How the provider is driven
//
// Every spec gets a fresh provider from the Config's factory and drives it the
// way kuscia's agent (secretflow/kuscia pkg/agent/framework, a port of the
// kubelet's pod workers) drives it: Start runs in its own goroutine; a sync
// is GetPodStatus, the API status the agent publishes (built as it builds it,
// package podstatus with AsKusciaAgent, then refined by RefreshPodStatus),
// and SyncPod with the same runtime status unless the published phase is
// terminal. The suite syncs a pod when kuscia's agent would, never on a
// timer: when the pod is added, when the spec changes its spec, metadata
// or deletion, and when the provider calls HandlePodSyncByUID on the
// handler the suite hands it before Start (kri.PodSyncNotifier); a wait
// that times out because no call came says so. A provider that does not
// implement kri.PodSyncNotifier is told so once, at the first pod spec, it
// is the verdict's first reason, and a wait for a sync only its call could
// bring fails at once instead of timing out. On the real clock a wait says
// every 10s what it waits for (a step, shown under go test -v). A
// termination is KillPod with the running pod built by
// pkgcontainer.ConvertPodStatusToRunningPod, then the agent's check that
// GetPodStatus reports nothing running, retried while it does; an orphan is
// killed with the running pod GetPods(false) lists; DeletePod and CleanupPods
// follow. At the end of the spec, passed or failed, the suite kills and deletes
// the pods it created, calls Stop and cancels the contexts it handed out.
//
// A MUST spec fails only when what the agent would publish (phase, container
// states and reasons, restart counts, last terminations, readiness) or decide
// (an error, a kill issued or skipped) is wrong, or when the pod spec's ask
// (the pod-spec capabilities) is not met, and its message says so. A
// provider's intermediate answers that no agent path reads are judged by
// SHOULD specs of their own; a spec that meets one on its way notes it in a
// kri:diagnostic report entry and goes on to judge its own promise.
//
// Every provider call runs under a deadline (Timeouts.Call, 30s by default):
// a call that does not return fails the spec with "<Method> did not return
// within 30s" and the run goes on, its goroutine abandoned; a call that
// panics fails the spec with the panic value and stack.
//
// No spec waits a fixed time of its own choosing. A wait for the provider
// to reach a state takes its bound from Timeouts, scaled by TimeoutScale
// and -kri.timeout-scale, plus whatever time the spec's pod sets that the
// provider must first let pass (a probe's periods, a grace period, a
// container's sleep): KRI-POD-077 watches for removeAfter+periods(2), the
// time its pod's liveness probe takes to fail, that nothing starts again.
// On the real clock those times bound from below what load can only
// lengthen, and the few checks that need a real process to act within a
// window try again with the State timeout (podEnv.slowTries; the README's
// "On a loaded machine" lists them). In virtual time (Config.VirtualTime),
// which load does not stretch, a bound may be exact: a failed liveness
// probe kills its container within one period of its failureThreshold-th
// failure (KRI-POD-074), a container without a readiness probe is Ready
// within 2s (KRI-POD-100).
//
// The context handed to a factory is cancelled once the spec has been
// cleaned up: a provider that holds resources beyond Stop releases them then
// (for example with context.AfterFunc).
//
// # Virtual time and parallel specs
//
// With Config.VirtualTime each spec (the provider's construction, Start,
// every call and wait, the cleanup and Stop) runs in a testing/synctest
// bubble of its own, whose clock jumps ahead whenever every goroutine of
// the spec waits: for providers whose only clock is Go's time and that do
// no real I/O (the fake, a simulated backend, a fake clientset), the suite's
// waits then cost no real time. Ginkgo stays outside the bubbles; the
// spec's steps and report entries are recorded outside them, with real
// timestamps, and its failure is carried back to Ginkgo. A provider that
// leaves goroutines blocked after the spec, or blocks a call on something
// synctest cannot see (a mutex held for good, real I/O), fails the spec
// with a message naming it (see Config.VirtualTime). It needs Run.
//
// With Config.Parallel the specs may run in parallel processes under the
// Ginkgo CLI ('ginkgo --procs=N'): each process builds its own providers,
// which may share a runtime or a backend; the specs that call CleanupPods
// and the benchmarks run alone (Ginkgo's Serial); the summary is written
// once, by the first process, from the merged report; that process fails
// when the gate does (see below). Without it every spec is Serial. Within
// a process the suite is safe for the race detector.
//
// # Specs, labels and capabilities
//
// Each spec has a stable ID at the start of its text ("[KRI-POD-001] ...")
// and labels: "pod" or "node", a feature group ("sync", "kill", "cleanup",
// ...), its level ("must" or "should"), "capability:<name>" for each optional
// capability it needs, and "benchmark" for the latency measurements, which
// are left out unless the label filter asks for them. Catalogue lists them
// all; the kit keeps the same list in testdata/conformance.yaml.
//
// A spec needing a Capability the Config does not declare is skipped, naming
// the capability. A provider may return ErrNotSupported (wrapped or not) from
// an operation it does not implement: the spec is skipped, naming the
// operation. Specs a provider is known to fail can be listed in
// Config.ExpectedFailures while it adopts the suite.
//
// # What the pod spec asks of the node
//
// Specs in the group "pod-spec" (KRI-POD-057 on) check what the pod spec
// asks of whoever runs the containers, which in KRI is the provider, as the
// kubelet's runtime manager is for the kubelet: imagePullPolicy
// (CapImagePullPolicy), env values and $(VAR) expansion (CapEnvExpansion),
// termination messages (CapTerminationMessage). Each is gated by its
// capability, so a provider that leaves these to its backend declares none
// and stays conformant, and each mirrors a node e2e test of
// kubernetes/kubernetes test/e2e/common/node. Their workloads are shell
// scripts in the vocabulary of package workload, run through
// Workloads.Shell; Workloads.TerminationMessagePath lets a provider without
// a container file system name a host file instead of /dev/termination-log.
//
// # Verdict and exit status
//
// After the run the suite prints a short summary: the result of every spec
// (passed, failed, skipped, expected-failure, not-run), the capabilities
// declared, per failed spec its catalogue requirement, last By step and
// first failure line, and a verdict. The verdict is "conformant" only when
// every MUST spec that applies to the configured providers and declared
// capabilities passed: a skip is never a pass, nor is an expected failure,
// and a filtered run (-ginkgo.focus, -ginkgo.skip, a label filter that
// leaves MUST specs out) is never conformant.
//
// The rule: the run (go test with Run, RunSpecs with the Describe functions)
// fails exactly when the verdict is "not conformant" or, in strict mode
// (Config.Strict, -kri.strict), when an applicable SHOULD spec did not pass
// and Config.ExpectedFailures does not list it.
// These rules, the summary and the handling of warnings and expected
// failures below are package github.com/kri-kit/testkit/suite's, a module
// free of kubelet imports that the virtual-kubelet suite (package vk)
// shares, with its own -vk.* flags and vk:* entries.
//
// Without strict mode a failed SHOULD spec is a warning: Ginkgo sees a skip
// whose message starts "<ID> is a SHOULD spec: its failure is a warning",
// the console shows the failure as the spec's kri:warning report entry, the
// JUnit report has a <skipped> testcase with a kri:warning property holding
// the failure, and the summary lists the spec as failed and names it in a
// warning under the verdict. It is deliberately not a JUnit <failure>: the
// dashboards and report actions that count failures (a merge request's test
// widget, an "unstable" build, a check run that fails on failed tests) would
// then contradict the exit status; this way the JUnit failures are exactly
// what fails the run. In strict mode a SHOULD failure is an ordinary failure.
//
// When the gate fails, the summary node, the testcase "[ReportAfterSuite]
// KRI conformance summary", fails with the reasons, so that a run that fails
// with no failed spec (a skipped MUST spec, an expected failure) shows a
// failure in the JUnit report as well. Its kri:verdict and kri:gate report
// entries (JUnit properties) always carry the verdict and the gate. A dry run
// (-ginkgo.dry-run) has no verdict and fails nothing.
//
// Config.ExpectedFailures does not change the rule: an expected failure of a
// MUST spec still fails the run, one of a SHOULD spec never does (without
// strict mode the entry is unnecessary and the summary says so).
// Config.SkipExpectedFailures saves the timeouts such specs wait out.
//
// # Where things are
//
// Every spec group lives in a file named for its catalogue label:
// pod_<group>.go for the PodLifecycleHandler groups (pod_sync.go,
// pod_status.go, pod_refresh.go, pod_kill.go, pod_restart.go, pod_init.go,
// pod_reason_cache.go, pod_cleanup.go, pod_delete.go, pod_lifecycle.go,
// pod_ownership.go, pod_validation.go, pod_context.go, pod_concurrency.go,
// pod_notify.go, and the benchmarks in pod_latency.go), podspec_<capability>.go for what
// the pod spec asks (podspec_image.go, podspec_env.go,
// podspec_termination_message.go, podspec_hooks.go, podspec_sidecars.go,
// podspec_probes.go, podspec_resize.go), node_<group>.go for the
// NodeProvider (node_configure.go, node_ping.go, node_refresh.go,
// node_callback.go, node_context.go). Each holds its specs' list
// (podKillSpecs) and their bodies; catalogue.go's specGroups lists the
// groups. The self-tests of a group sit beside it: pod_kill_mutants_test.go
// (providers that break a kill spec, each failing exactly the specs it
// names) and pod_kill_benign_test.go (providers that take a freedom the
// contract grants, which every spec must pass).
//
// The machinery: run.go (Run, the Describe functions), config.go (Config,
// capabilities, timeouts, workloads), catalogue.go, summary.go (the summary,
// the verdict and the gate), env.go (what every spec runs on: the guarded
// provider calls, the polls, the cleanups), agent.go (the agent model: the
// calls kuscia's agent makes and what it publishes), agent_cadence.go (when
// it makes them: the handler handed to the provider, the waits at the
// agent's cadence), pod_env.go and
// node_env.go (a spec's provider, pods and containers), pod_observe.go
// (reading statuses: instances, restarts across polls), virtual_time.go.
// The self-test harness: selftest_registry_test.go (every group's mutants
// and benign variants), selftest_mutants_test.go and
// selftest_benign_test.go (the runners), selftest_helper_test.go (each run
// in a process of its own), selftest_hostprocess_test.go (the pod-spec
// mutants and variants built on examples/hostprocess),
// selftest_interceptors_test.go (interceptors they share),
// selftest_notify_test.go (wrappers of the fake's HandlePodSyncByUID calls:
// dropped, late, folded, added).
//
// The kit's own checks of the catalogue and the docs: catalogue_test.go
// (testdata/conformance.yaml, the retired IDs), contract_test.go
// (testdata/contract.yaml against the kri doc comments), readme_test.go
// (the README's capability table).
//
// # To add a spec
//
// The steps, in order; the test named with each fails until it is done.
//
//  1. The promise. A spec checks a sentence of the doc comments of package
//     kri (kri/pod.go, kri/node.go, kri/podsync.go, ...): when what it
//     checks is not yet a sentence there, or a sentence leaves it out,
//     write the sentence first. It is the contract; the spec only checks
//     it. TestContractCoverage then wants it in testdata/contract.yaml
//     (step 5; KRI_UPDATE_CONTRACT=1 go test ./conformance -run
//     TestContractCoverage -v logs a skeleton entry). A sentence that
//     changes keeps its entry: edit the entry's sentence: in place, so its
//     specs and citations stay (the skeleton carries none of them).
//  2. The entry: a specDef appended to the group's list (podKillSpecs in
//     pod_kill.go, ...) with the next unused ID of its kind, which
//     'go test ./conformance -run TestSpecIDs -v' prints. IDs are never
//     reused: an ID given up goes into retiredIDs (catalogue_test.go),
//     and TestSpecIDs fails on any other gap.
//  3. The body, a func(*podEnv) or func(*nodeEnv) beside the entry in the
//     group's file; its waits as above (Timeouts, the pod's own times).
//     A check that something does not happen holds for a window: the
//     pod's own times that a broken provider would need to go wrong (a
//     command's sleep, a probe's periods) plus Timeouts.Stable, with the
//     agent's syncs meanwhile (syncHolding, statusHolding, holdAsAgent;
//     probeRun.hold for the probe specs). Every host run of the spec's
//     group (step 7) waits that window out on the real clock: keep the
//     pod's times short.
//  4. The catalogue: KRI_UPDATE_CATALOGUE=1 go test ./conformance -run
//     TestCatalogue rewrites testdata/conformance.yaml (TestCatalogue).
//  5. The contract table: the ID under the sentence's entry in
//     testdata/contract.yaml (specs:), with, for a MUST spec, the function
//     of kuscia's agent that depends on the promise (agent:) or why none
//     does (no_kuscia_caller:), and for a pod-spec spec the node e2e test
//     it mirrors (e2e:) (TestContractCoverage, TestAgentCitations,
//     TestE2ECitations).
//  6. The README's capability table: a spec that needs a capability is
//     listed in its row; a new capability is a Capability constant in
//     config.go, a member of AllCapabilities and a new row, which says
//     which of the kit's providers declare it (TestReadmeCapabilityTable).
//  7. The mutant, in the group's _mutants_test.go: a provider that breaks
//     the promise and fails exactly the new spec (want). Decorate the fake
//     (pod: interceptor.PodFuncs around any of its methods, node:
//     interceptor.NodeFuncs, notify and podLater its HandlePodSyncByUID
//     calls): it runs in virtual time, about a second a run. Decorate
//     examples/hostprocess (host:) only for what the fake merely
//     simulates and a real runtime gets wrong with real processes (the
//     pod-spec groups but resize and network-probes): real processes on
//     the real clock, without the grace-period specs, and only the specs
//     of the groups of the specs it wants (hostFocus: a host mutant of a
//     probes spec runs the probes specs, a few seconds to a minute);
//     it is wrapped with kri/interceptor as the fake is, so a func of any
//     method takes effect (TestHostMutantsInterceptEveryMethod). Host
//     mutants and variants are named host-... . A promise about a field of
//     the pod spec that the fake reads (a probe's timeoutSeconds, a
//     hook's command) breaks on the fake too, with a SyncPod that edits
//     the pod before the fake sees it (rewritePod in
//     selftest_hostprocess_test.go). When existing
//     mutants fail the new spec too (TestMutantsAreCaught and
//     TestHostMutantsAreCaught call it
//     "extra"), add the ID to the want of each, under a comment saying
//     why: a want that holds only by timing says so in a comment starting
//     "Timing"; a spec that a loaded machine decides for a host mutant
//     goes in its underLoad instead. To find them: go test ./conformance
//     -run TestMutantsAreCaught runs every fake mutant (about a minute
//     under -race on two cores; make test runs them); then the host
//     mutants of the spec's group, -run 'TestHostMutantsAreCaught/NAME$'
//     one by one, or all of them (make test-real's share, step 9).
//     TestEverySpecHasAMutant fails until some mutant wants the spec.
//  8. The benign variant, when the spec grants a freedom: a provider that
//     takes it, in the group's _benign_test.go (a benign around the fake,
//     a hostBenign around hostprocess), which every spec must pass. A new
//     spec, with a variant or without, must pass the existing ones:
//     go test ./conformance -run 'TestBenignVariantsPass|TestHostBenignVariantsPass|TestFakeIsConformant'.
//  9. The proof: go test ./conformance -run TestMutantsAreCaught/NAME$
//     (TestHostMutantsAreCaught/NAME$ for a host mutant) runs that mutant
//     alone and checks that it fails exactly its want;
//     TestBenignVariantsPass/NAME$ and TestHostBenignVariantsPass/NAME$
//     run one variant. Each subtest starts only its own suite run, in a
//     process of its own (this test binary, -race included, when the run
//     selects subtests); the whole package starts them all at once. Lower
//     down, KRI_CONFORMANCE_HELPER (mutant:NAME, benign:NAME,
//     host-benign:NAME) makes the test binary (go test -c) run that suite
//     itself with -test.run ^TestHelper$, in a scratch directory, as the
//     subtests do.
//
// Such an addition touches kri/<file>.go (a new sentence),
// conformance/<group>.go, testdata/conformance.yaml,
// testdata/contract.yaml, README.md (the capability row),
// conformance/<group>_mutants_test.go (and the mutant files of other
// groups whose mutants fail it too), conformance/<group>_benign_test.go,
// and fake/ or examples/ when a provider of the kit does not yet do what
// it asks. A new group also needs its list in catalogue.go's specGroups,
// its mutants and variants in selftest_registry_test.go, and its files in
// the map above.
//
// # Workloads
//
// The pods the suite creates use busybox-style containers with a small
// command vocabulary that both the fake provider and a real shell understand
// (see DefaultWorkloads); Config.Workloads replaces any of them:
//
//	sleep infinity                        runs until killed
//	sh -c "exit 3"                        exits with code 3 at once
//	sh -c "sleep 1; exit 0"               runs for a while, then exits 0
//	sh -c "trap '' TERM; sleep infinity"  ignores SIGTERM
//	/nonexistent/kri-conformance          fails to start
package conformance
