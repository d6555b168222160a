// Package vk is the conformance suite for virtual-kubelet providers: it
// judges a node.PodLifecycleHandler (optionally a node.PodNotifier) and a
// node.NodeProvider of github.com/virtual-kubelet/virtual-kubelet by what
// the real VK controllers do with them, in process, without a cluster.
//
// # Running it
//
// From a plain 'go test' in the provider's module, call Run once per test
// binary:
//
//	func TestConformance(t *testing.T) {
//		vk.Run(t, vk.Config{
//			NewPodProvider:  func(ctx context.Context) (node.PodLifecycleHandler, error) { return myprovider.New(), nil },
//			NewNodeProvider: func(ctx context.Context) (node.NodeProvider, error) { return myprovider.NewNode(), nil },
//			VirtualTime:     true,
//			Capabilities:    []vk.Capability{vk.CapContainerRestarts, vk.CapExitCodes},
//		})
//	}
//
// The test fails exactly when the verdict is "not conformant" (an
// applicable MUST spec failed, was skipped because a provider call answered
// ErrNotSupported, did not run, or is listed in Config.ExpectedFailures) or,
// with Config.Strict or -vk.strict, when an applicable SHOULD spec did not
// pass: its exit status is the verdict. The summary (stdout, and
// -vk.summary=FILE) lists each spec with its level, result and time, the
// failures with their first line, then the verdict and the gate;
// -ginkgo.junit-report=FILE writes a JUnit report, and the other -ginkgo.*
// flags work too (-ginkgo.focus=KVK-POD-005, -ginkgo.label-filter=must).
// Config.ExpectedFailures, SkipExpectedFailures (-vk.skip-expected-failures),
// TimeoutScale (-vk.timeout-scale) and Parallel (the Ginkgo CLI's --procs)
// work as the KRI suite's: the rules are package
// github.com/kri-kit/testkit/suite's, which both suites share.
//
// # The judge
//
// Every spec gets a fresh provider from the Config's factory and a VK of its
// own: node.NewPodController (2 workers) or node.NewNodeController (with a
// v1 lease), wired as VK's node/lifecycle_test.go (wireUpSystem) and
// node/nodeutil wire them, over client-go's fake clientset made faithful
// where VK depends on the API server (package
// github.com/kri-kit/testkit/sim/apiserver: UIDs, creation timestamps,
// resource versions, a status subresource that changes only the status,
// graceful deletion, label and field selectors). A provider
// that implements node.PodNotifier is async: VK registers a callback with
// NotifyPods; any other is polled by VK's syncProviderWrapper
// (GetPodStatus every 5s). A spec creates and deletes pods in the API
// server, as users do, and judges what VK then publishes (pod phase and
// container states, whether and when the pod goes away, the node and its
// lease) and the calls the provider got. The suite calls the provider only
// as VK does: NotifyPods before any other pod call of an async provider
// (PodController.Run), CreatePod only through VK (a re-sync while GetPod
// lags CreatePod, KVK-POD-004, is made by changing the pod in the API
// server), GetPodStatus only of a sync provider (node/sync.go), GetPods
// polled up to a bound (it may be a cache). A few specs call the provider
// directly, as VK does on a path the spec cannot steer to (GetPod of a pod
// the provider never got, DeletePod of a pod it does not know, the pod a
// previous VK left running), say why, and say what VK would then do; a
// provider's panic there names the suite's call and its setup step. Each message names the VK function behind it;
// Catalogue lists each spec's level and the code it rests on, and
// testdata/catalogue.yaml keeps the same list.
//
// What the pod spec asks of a backend (restarts, start failures, exit
// codes, grace periods, init containers, termination messages, readiness,
// liveness and startup probes, env, lifecycle hooks), a Ping
// that reports a backend made unhealthy and node changes pushed through
// NotifyNodeStatus are declared in Config.Capabilities (see Capability)
// and judged on the status VK publishes; a spec whose capability is not
// declared is skipped, the capability named in the reason. The containers
// those specs run come from Config.Workloads (DefaultWorkloads: shell
// commands in busybox), so that a backend that runs something else can
// give them in its own terms. A few specs (KVK-POD-017, 018, 034) judge what only an async provider
// can get VK to publish, and are skipped for a sync one. KVK-POD-036 drives
// several pods through VK at once: run the suite with -race, so that the
// race detector judges the provider's memory while the spec judges what VK
// publishes.
//
// With Config.VirtualTime each spec — the provider's construction, VK's
// controllers and informers, the fake API server and every wait — runs in a
// testing/synctest bubble of its own, whose clock jumps ahead whenever all
// of them wait: the three minutes KVK-POD-008 watches a running pod take
// milliseconds. It suits providers whose only clock is Go's time and that
// do no real I/O (a simulation, a fake backend). A goroutine of the
// provider still there a minute of the bubble's clock after the spec has
// stopped VK and cancelled the factory's context fails the spec, its stack
// printed (one that sleeps and then ends by itself does not). Without VirtualTime the specs run on
// the real clock (minutes).
//
// # Module layout: what this module imports of the kit
//
// This is a module of its own, github.com/kri-kit/testkit/vk, requiring
// github.com/virtual-kubelet/virtual-kubelet v1.13.0, the release on the
// kit's Kubernetes pin (k8s.io/* v0.35.4; v1.14.1 is on 0.37.1, and
// 'make test-k8s' runs the suite on it too: nothing here depends on which
// of the two it is built with). A VK
// provider's module that requires it needs neither k8s.io/kubernetes nor
// the kit's replace block (testdata/vkconsumer checks it: its go.mod has no
// replace but those pointing at the kit's checkout, and 'go list -m
// all' shows no k8s.io/kubernetes).
//
// So it imports none of the KRI kit's main module, which requires
// k8s.io/kubernetes, whose go.mod requires its staging modules
// (k8s.io/kubelet, k8s.io/cri-client, k8s.io/component-helpers, ...) at
// v0.0.0, which no proxy serves: even a kubelet-free package of that module
// leaves those v0.0.0 requirements in the graph, and 'go list -m all', and
// every tool that lists the build list that way, fails on them. It imports
// the kit's two kubelet-free modules instead:
// github.com/kri-kit/testkit/suite, the runner's rules (verdict, gate,
// summary, ExpectedFailures, the flags, ErrNotSupported), which the KRI
// suite shares and which requires neither the kubelet nor virtual-kubelet
// (only Ginkgo); and github.com/kri-kit/testkit/sim, the kit's simulations
// (package sim/workload: the container command vocabulary and the pod
// simulation, the kubelet's $(VAR) expansion, reasons, back-off and
// termination-message rules in the kit's own code). The reference provider
// here (package simprovider) still reads a container's command with a
// small parser of its own; what it takes from workload is listed in its
// doc.
package vk
