// Package suite is what the kit's conformance suites share: the KRI suite
// (package github.com/kri-kit/testkit/conformance) and the virtual-kubelet
// one (github.com/kri-kit/testkit/vk). It holds the rules that turn a Ginkgo
// run into a verdict, and nothing that knows a provider: it imports neither
// the kubelet (k8s.io/kubernetes) nor virtual-kubelet, so that a VK
// provider's module, which needs this package through vk, never needs the
// kubelet or its replace block.
//
// What it decides, for every suite alike:
//
//   - A spec ends in one Result (Classify reads it back from the spec's
//     Ginkgo report, so it works for a run spread over parallel Ginkgo
//     processes, whose ReportAfterSuite runs once, in process 1, with the
//     report of the whole run): passed, failed, skipped, expected-failure or
//     not-run.
//   - The verdict (Verdict): conformant exactly when every applicable MUST
//     spec passed. A MUST spec skipped (ErrNotSupported), not run (filtered
//     out) or listed in ExpectedFailures makes it "not conformant", and so
//     does a run with no applicable MUST spec.
//   - The gate (Judge): the run fails exactly when the verdict is "not
//     conformant" or, in strict mode, when an applicable SHOULD spec did not
//     pass and ExpectedFailures does not list it; besides, anything Ginkgo
//     itself failed (a panic in a SHOULD spec, a suite node) fails it.
//   - How a spec body's end is reported to Ginkgo (Settle): without strict
//     mode a SHOULD failure is a warning (a skip carrying the
//     "<prefix>:warning" report entry), a failure listed in ExpectedFailures
//     an expected failure (a skip carrying "<prefix>:expected-failure"), a
//     listed spec that passes fails and asks to be removed from the list.
//     So Ginkgo's own result, and the exit status of go test, fail for
//     exactly the failures that fail the run.
//   - The summary (Summary.Text) and its writing at the end of the run
//     (Suite.Write): every spec with its level and result, the failures
//     with their last step, the verdict and the gate, printed, written to
//     the summary file and carried by the report entries "<prefix>:verdict"
//     and "<prefix>:gate" (JUnit properties).
//   - The command-line flags of a suite (Flags: -<prefix>.strict,
//     -<prefix>.summary, -<prefix>.timeout-scale,
//     -<prefix>.skip-expected-failures) and the validation of the
//     configuration they share (ConfigCheck: the provider factories, the
//     capabilities declared against those the suite knows and the fields
//     they need, ExpectedFailures, TimeoutScale, durations and counts not
//     negative, all worded alike and gathered into one error; Flags.Scale).
//   - ErrNotSupported, which a provider returns from an operation it does
//     not implement, and IsNotSupported, which also follows the Cause
//     chains of github.com/pkg/errors and virtual-kubelet's errdefs.
//
// A suite names itself with a Suite value (its name in messages, the prefix
// of its flags and report entries, the pattern of its spec IDs) and keeps
// what is its own: its catalogue, its configuration, which specs apply to a
// configuration, and the header lines of its summary.
package suite
