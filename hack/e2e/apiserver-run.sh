# apiserver-run.sh: sourced by run.sh, whose variables ($here, $repo, $out,
# $GO, the failed array and the api_*_s timings) it uses: the part of the
# end-to-end run against a real API server. Builds kube-apiserver and etcd
# (apiserver-build.sh), starts them (apiserver-up.sh), runs the smoke test
# TestSmokeAPIServer of hack/e2e/apiserver, then TestConformanceAPIServer of
# examples/kubebackend (KRI_E2E_KUBEBACKEND: another directory; the package
# is the one whose _test.go file declares the test) and the VK suite's
# three tests of vk/apiserver_test.go, each built before its clock starts
# and run with KRI_E2E_KUBECONFIG set. Writes smoke.log, test.log,
# summary.txt and junit.xml (and vk-*.log, vk-*-summary.txt,
# vk-*-junit.xml) to $out/apiserver, and the servers' logs too when
# something failed. A test that is skipped, or not found,
# counts as failed; only a missing examples/kubebackend is reported as not
# run (the example comes with issue 19).
api_out=$out/apiserver
rm -rf "$api_out"
mkdir -p "$api_out"

# api_test NAME DIR TEST LOG [ARGS...]: builds the test binary of the
# package in DIR, runs its test TEST there with KRI_E2E_KUBECONFIG set and
# its output in LOG, prints the outcome lines and sets api_test_s to the
# run's wall time; adds to failed unless TEST passed.
api_test() {
	local name=$1 dir=$2 test=$3 log=$4 bin status=0 t
	api_test_s=-
	shift 4
	bin=$API_DIR/$(basename "$log" .log).test
	if ! (cd "$dir" && "$GO" test -c -o "$bin" .); then
		failed+=("$name: the test binary did not build")
		return
	fi
	t=$(now)
	(cd "$dir" && KRI_E2E_KUBECONFIG="$API_KUBECONFIG" "$bin" -test.run "^$test\$" -test.count=1 -test.v \
		-test.timeout "${E2E_TEST_TIMEOUT:-30m}" "$@") >"$log" 2>&1 || status=$?
	api_test_s=$(elapsed "$t")
	grep -E '^(--- |PASS|FAIL|ok )' "$log" >&2 || true
	if [ "$status" -ne 0 ] || ! grep -q "^--- PASS: $test " "$log"; then
		log "$name failed (exit $status$(grep -q "^--- SKIP: $test " "$log" && echo ', skipped')); full log: $log"
		failed+=("$name (exit $status)")
	fi
}

t=$(now)
bash "$here/apiserver-build.sh"
api_build_s=$(elapsed "$t")
t=$(now)
# Refused (another run's servers, or a port taken): teardown leaves them alone.
start_part api_up "$here/apiserver-up.sh"
api_start_s=$(elapsed "$t")

failed_before=${#failed[@]}
api_test "the API server smoke test" "$API_MODULE" TestSmokeAPIServer "$api_out/smoke.log"
api_smoke_s=$api_test_s

kubebackend=$repo/${KRI_E2E_KUBEBACKEND:-examples/kubebackend}
if [ ! -d "$kubebackend" ]; then
	api_suite_s="(not run)"
	log "NOT RUN: the suite against the API server: $kubebackend is not there"
else
	mapfile -t decl < <(grep -rlE --include='*_test.go' '^func TestConformanceAPIServer\(' "$kubebackend" || true)
	if [ ${#decl[@]} -ne 1 ]; then
		failed+=("the suite against the API server: want one _test.go file under $kubebackend declaring TestConformanceAPIServer, found ${#decl[@]} (${decl[*]-})")
	else
		suite_dir=$(dirname "${decl[0]}")
		if ! (cd "$suite_dir" && "$GO" test -c -o "$API_DIR/suite.test" .) || ! cli=$(ginkgo_cli "$API_DIR"); then
			failed+=("the suite against the API server: the test binary or the Ginkgo CLI did not build")
		else
			t=$(now)
			KRI_E2E_KUBECONFIG="$API_KUBECONFIG" run_suite "$E2E_APISERVER_PROCS" "$cli" "$API_DIR/suite.test" "$api_out/test.log" \
				"$api_out/summary.txt" "$api_out/junit.xml" -test.run '^TestConformanceAPIServer$' ${E2E_APISERVER_ARGS:-} ||
				failed+=("the suite against the API server (full log: $api_out/test.log)")
			api_suite_s=$(elapsed "$t")
		fi
		[ ! -f "$api_out/summary.txt" ] || cat "$api_out/summary.txt" >&2
	fi
fi
# The VK suite (vk/, a module of its own) with VK's controllers over the
# same API server: the async and the sync reference provider, each through
# Run with its summary and JUnit report, in E2E_VK_PROCS parallel
# processes under the Ginkgo CLI of the vk module, and virtual-kubelet#938
# (a status the API server rejects fails the spec that waits for it). VK's
# own times (5 s polls, a minute before a missing pod is Failed, 40 s
# leases) make the suite about 13 minutes of real time in one process,
# mostly waiting: the three run at once, each process's VK a node of its
# own (vk.Config.NodeName).
t=$(now)
vk_pids=()
vk_tags=()
# vk_background TAG CMD...: runs CMD in the background, its failure (and
# the name it gives itself) into $API_DIR/TAG.failed.
vk_background() {
	local tag=$1
	shift
	(
		failed=()
		"$@"
		printf '%s\n' "${failed[@]}" >"$API_DIR/$tag.failed"
	) &
	vk_pids+=("$!")
	vk_tags+=("$tag")
}
# vk_suite TEST NAME: the VK suite's test TEST under the Ginkgo CLI.
vk_suite() {
	local test=$1 name=$2
	KRI_E2E_KUBECONFIG="$API_KUBECONFIG" SUITE_FLAGS=vk run_suite "$E2E_VK_PROCS" "$API_DIR/ginkgo-vk" "$API_DIR/vk.test" \
		"$api_out/$name.log" "$api_out/$name-summary.txt" "$api_out/$name-junit.xml" -test.run "^$test\$" ||
		failed+=("the VK suite against the API server, $test (full log: $api_out/$name.log)")
}
if ! (cd "$repo/vk" && "$GO" test -c -o "$API_DIR/vk.test" . && "$GO" build -o "$API_DIR/ginkgo-vk" github.com/onsi/ginkgo/v2/ginkgo); then
	failed+=("the VK suite against the API server: its test binary or the vk module's Ginkgo CLI did not build")
else
	vk_background vk-async vk_suite TestConformanceAPIServer vk-async
	vk_background vk-sync vk_suite TestConformanceAPIServerSync vk-sync
	vk_background vk-rejected api_test "the VK suite's rejected-status check (virtual-kubelet#938)" "$repo/vk" \
		TestAPIServerRejectionFailsTheSpec "$api_out/vk-rejected.log"
	wait "${vk_pids[@]}" || true
	for tag in "${vk_tags[@]}"; do
		if [ ! -f "$API_DIR/$tag.failed" ]; then
			failed+=("$tag: ended without a result")
			continue
		fi
		while IFS= read -r f; do
			[ -z "$f" ] || failed+=("$f")
		done <"$API_DIR/$tag.failed"
	done
fi
api_vk_s=$(elapsed "$t")
for f in "$api_out/vk-async-summary.txt" "$api_out/vk-sync-summary.txt"; do
	[ ! -f "$f" ] || cat "$f" >&2
done

if [ ${#failed[@]} -gt "$failed_before" ]; then
	cp "$APISERVER_LOG" "$ETCD_LOG" "$api_out/" 2>/dev/null || true
fi
