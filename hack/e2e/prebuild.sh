#!/usr/bin/env bash
# prebuild.sh: compiles ahead what 'make e2e' compiles, so that .ci/run can
# run it in the background, niced, while 'make test' runs: kube-apiserver,
# etcd and e2ectl (apiserver-build.sh) and the test binaries of the
# end-to-end suites, all without -race. 'make test' builds everything with
# -race, so none of this is in the build cache after it; 'make e2e' then
# finds the binaries up to date and the test binaries' packages compiled
# (it only links them). Safe to run at any time; writes nothing but the
# binaries in $API_BIN and the build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/apiserver-common.sh"
GO=${GO:-go}

start=$(now)
bash "$here/apiserver-build.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$API_REPO/examples/kubeletruntime" && "$GO" test -c -o "$tmp/" ./e2e/)
(cd "$API_MODULE" && "$GO" test -c -o "$tmp/" .)
kubebackend=$API_REPO/${KRI_E2E_KUBEBACKEND:-examples/kubebackend}
for f in $(grep -rlE --include='*_test.go' '^func TestConformanceAPIServer\(' "$kubebackend" 2>/dev/null || true); do
	(cd "$(dirname "$f")" && "$GO" test -c -o "$tmp/" .)
done
log "prebuilt the end-to-end binaries in $(elapsed "$start") s"
