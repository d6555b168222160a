#!/usr/bin/env bash
# run.sh: the end-to-end run of 'make e2e', in two parts.
#
# Against containerd: checks and installs the prerequisites (prereq.sh),
# starts a private containerd (up.sh), builds and imports the images
# (images.sh), runs the conformance suite against examples/kubeletruntime
# over containerd's CRI endpoint (examples/kubeletruntime/e2e,
# TestConformanceContainerd).
#
# Against a real API server: builds kube-apiserver and etcd from their Go
# modules (apiserver-build.sh), starts both on loopback
# (apiserver-up.sh), runs the smoke test of the API server
# (hack/e2e/apiserver, TestSmokeAPIServer) and then the conformance suite
# against examples/kubebackend (TestConformanceAPIServer, in the package of
# examples/kubebackend that declares it), then the VK suite (vk/,
# TestConformanceAPIServer, TestConformanceAPIServerSync,
# TestAPIServerRejectionFailsTheSpec), all with KRI_E2E_KUBECONFIG set.
#
# Tears down what it started (down.sh, apiserver-down.sh), also when a step
# failed or the run was interrupted, and nothing of another run: when up.sh
# or apiserver-up.sh refuses because an earlier run's containerd or servers
# are still up (exit status 2), their part is not torn down. Prints the wall
# time of each step and writes the suites' summaries and JUnit reports to
# $OUTPUT/e2e (default _output/e2e; the API server's under
# $OUTPUT/e2e/apiserver).
#
# Exits non-zero when a prerequisite is missing, a step fails, a suite
# fails or teardown leaves anything behind. A failing containerd part does
# not keep the API server part from running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/apiserver-common.sh"
repo=$(cd "$here/../.." && pwd)
out=${OUTPUT:-$repo/_output}/e2e
case $out in /*) ;; *) out=$repo/$out ;; esac
mkdir -p "$out"
GO=${GO:-go}

# KRI_E2E_PARTS: which parts to run (default both). The API server part
# alone needs neither root nor containerd.
parts=" ${KRI_E2E_PARTS:-containerd apiserver} "
for p in $parts; do
	case $p in containerd | apiserver) ;; *) die "KRI_E2E_PARTS: unknown part $p (want containerd, apiserver or both)" ;; esac
done

prereq_s=- setup_s=- suite_s=- teardown_s=-
api_build_s=- api_start_s=- api_smoke_s=- api_suite_s=- api_vk_s=- api_teardown_s=-
report() {
	{
		printf 'e2e: wall time: prerequisites %s s, setup %s s, suite %s s, teardown %s s\n' "$prereq_s" "$setup_s" "$suite_s" "$teardown_s"
		printf 'e2e: API server wall time: build %s s, start %s s, smoke test %s s, suite %s s, VK suite %s s, teardown %s s\n' \
			"$api_build_s" "$api_start_s" "$api_smoke_s" "$api_suite_s" "$api_vk_s" "$api_teardown_s"
	} | tee "$out/timings.txt" >&2
}
teardown() {
	local rc=$? t
	trap - EXIT INT TERM
	if [ -n "${containerd_up:-}" ]; then
		t=$(now)
		bash "$here/down.sh" || rc=1
		teardown_s=$(elapsed "$t")
	fi
	if [ -n "${api_up:-}" ]; then
		t=$(now)
		bash "$here/apiserver-down.sh" || rc=1
		api_teardown_s=$(elapsed "$t")
	fi
	report
	repeat_failures
	exit "$rc"
}
# repeat_failures: prints again, last, the failures section of each suite's
# summary: a CI that keeps only the head and tail of a long log still shows
# which spec failed and why.
repeat_failures() {
	local f
	for f in "$out/summary.txt" "$out/apiserver/summary.txt"; do
		[ -f "$f" ] && grep -q '^failures:' "$f" || continue
		echo "e2e: the failures in $f, again:" >&2
		awk '/^failures:/ { on = 1; next } on && /^[^ ]/ { exit } on' "$f" >&2
	done
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failed=()
if [[ $parts == *" containerd "* ]]; then
	t=$(now)
	bash "$here/prereq.sh"
	prereq_s=$(elapsed "$t")

	# The workload vocabulary's httpd (and kill $! of it), run by sh and
	# busybox's sh with the busybox that prereq.sh has installed (make
	# test checks only the kit's stand-in when busybox is missing; here a
	# missing busybox fails).
	if ! (cd "$repo" && KRI_E2E_BUSYBOX=1 "$GO" test -count=1 -run '^(TestServersInAShell|TestServerStopsInAShell)$' ./internal/httpd/); then
		failed+=("the workload vocabulary's httpd under busybox (go test -run 'TestServersInAShell|TestServerStopsInAShell' ./internal/httpd)")
	fi

	t=$(now)
	start_part containerd_up "$here/up.sh"
	bash "$here/images.sh"
	setup_s=$(elapsed "$t")

	# The test binary is built before the clock starts: a cold build of the
	# kubelet's packages is not the suite's time.
	(cd "$repo/examples/kubeletruntime" && "$GO" test -c -o "$E2E_DIR/e2e.test" ./e2e/)
	cli=$(ginkgo_cli "$E2E_DIR")
	t=$(now)
	status=0
	KRI_E2E_CRI_ENDPOINT="unix://$E2E_SOCK" run_suite "$E2E_PROCS" "$cli" "$E2E_DIR/e2e.test" \
		"$out/test.log" "$out/summary.txt" "$out/junit.xml" ${E2E_ARGS:-} || status=$?
	suite_s=$(elapsed "$t")
	if [ -f "$out/summary.txt" ]; then
		cat "$out/summary.txt" >&2
	fi
	if [ "$status" -ne 0 ]; then
		log "the suite failed (exit $status); full log: $out/test.log"
		cp "$E2E_LOG" "$out/containerd.log" 2>/dev/null || true
		failed+=("the suite against containerd (exit $status)")
	fi
fi

if [[ $parts == *" apiserver "* ]]; then
	. "$here/apiserver-run.sh"
fi

if [ ${#failed[@]} -gt 0 ]; then
	log "failed: ${failed[*]}"
	exit 1
fi
