#!/usr/bin/env bash
# soak.sh RUNS: runs the conformance suite RUNS times in a row against the
# fake (conformance.TestFakeIsConformant) and against the example providers
# (hostprocess, remotebackend, kubeletruntime, kubebackend: their
# TestConformance), each
# test binary built once
# with -race. Prints one line per run and a tally; exits non-zero if any run
# failed. Every run gets a fresh process, as CI would.
set -euo pipefail
runs=${1:-20}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

go test -race -c -o "$bin/conformance.test" ./conformance
go test -race -c -o "$bin/hostprocess.test" ./examples/hostprocess
go test -race -c -o "$bin/remotebackend.test" ./examples/remotebackend
go test -race -c -o "$bin/kubebackend.test" ./examples/kubebackend
(cd examples/kubeletruntime && go test -race -c -o "$bin/kubeletruntime.test" .)

failed=0
soak() { # name dir binary test
	local name=$1 dir=$2 binary=$3 test=$4 ok=0 i start took
	for ((i = 1; i <= runs; i++)); do
		start=$(date +%s%N)
		if (cd "$dir" && "$binary" -test.run "^$test\$" -test.count=1 -ginkgo.no-color >"$bin/out" 2>&1); then
			ok=$((ok + 1))
			took=$((($(date +%s%N) - start) / 1000000))
			printf '%s run %2d/%d: passed (%d ms)\n' "$name" "$i" "$runs" "$took"
		else
			failed=$((failed + 1))
			printf '%s run %2d/%d: FAILED\n' "$name" "$i" "$runs"
			grep -E '^\s*\[FAIL\]|FAILED\]' "$bin/out" | sed 's/^/    /' | head -20 || tail -20 "$bin/out"
		fi
	done
	printf '%s: %d of %d runs passed\n' "$name" "$ok" "$runs"
}
soak fake conformance "$bin/conformance.test" TestFakeIsConformant
soak hostprocess examples/hostprocess "$bin/hostprocess.test" TestConformance
soak remotebackend examples/remotebackend "$bin/remotebackend.test" TestConformance
soak kubeletruntime examples/kubeletruntime "$bin/kubeletruntime.test" TestConformance
soak kubebackend examples/kubebackend "$bin/kubebackend.test" TestConformance
[ "$failed" -eq 0 ]
