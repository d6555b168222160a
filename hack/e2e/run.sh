#!/usr/bin/env bash
# run.sh: the end-to-end run of 'make e2e': checks and installs the
# prerequisites (prereq.sh), starts a private containerd (up.sh), builds
# and imports the images (images.sh), runs the conformance suite against
# examples/kubeletruntime over containerd's CRI endpoint
# (examples/kubeletruntime/e2e, TestConformanceContainerd), and tears
# everything down (down.sh), also when a step failed or the run was
# interrupted. Prints the wall time of the prerequisites (checks, and the
# installs when packages are missing), setup (containerd and images), suite
# (the test binary, built beforehand) and teardown, and writes
# the suite's summary and JUnit report to $OUTPUT/e2e (default _output/e2e).
#
# Exits non-zero when a prerequisite is missing, a step fails, the suite
# fails or teardown leaves anything behind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
repo=$(cd "$here/../.." && pwd)
out=${OUTPUT:-$repo/_output}/e2e
case $out in /*) ;; *) out=$repo/$out ;; esac
mkdir -p "$out"
GO=${GO:-go}

t=$(now)
bash "$here/prereq.sh"
prereq_s=$(elapsed "$t")

setup_s=- suite_s=- teardown_s=-
report() {
	printf 'e2e: wall time: prerequisites %s s, setup %s s, suite %s s, teardown %s s\n' "$prereq_s" "$setup_s" "$suite_s" "$teardown_s" | tee "$out/timings.txt" >&2
}
teardown() {
	local rc=$? t
	trap - EXIT INT TERM
	t=$(now)
	bash "$here/down.sh" || rc=1
	teardown_s=$(elapsed "$t")
	report
	exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t=$(now)
bash "$here/up.sh"
bash "$here/images.sh"
setup_s=$(elapsed "$t")

# The test binary is built before the clock starts: a cold build of the
# kubelet's packages is not the suite's time.
cd "$repo/examples/kubeletruntime"
"$GO" test -c -o "$E2E_DIR/e2e.test" ./e2e/
t=$(now)
status=0
(cd e2e && KRI_E2E_CRI_ENDPOINT="unix://$E2E_SOCK" "$E2E_DIR/e2e.test" \
	-test.run '^TestConformanceContainerd$' -test.count=1 -test.v \
	-test.timeout "${E2E_TEST_TIMEOUT:-30m}" -ginkgo.no-color \
	-ginkgo.junit-report="$out/junit.xml" -kri.summary="$out/summary.txt" \
	${E2E_ARGS:-}) >"$out/test.log" 2>&1 || status=$?
suite_s=$(elapsed "$t")
grep -E '^(--- |PASS|FAIL|ok )' "$out/test.log" >&2 || true
if [ -f "$out/summary.txt" ]; then
	cat "$out/summary.txt" >&2
fi
if [ "$status" -ne 0 ]; then
	log "the suite failed (exit $status); full log: $out/test.log"
	cp "$E2E_LOG" "$out/containerd.log" 2>/dev/null || true
	exit "$status"
fi
