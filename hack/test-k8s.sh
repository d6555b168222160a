#!/usr/bin/env bash
# Usage: hack/test-k8s.sh v1.MINOR.PATCH [make target ...]
#
# Runs make targets (default: test-kit test-consumer) on a copy of this
# repository moved to another Kubernetes release: the files git tracks or
# would track (uncommitted changes included) are copied to
# $OUTPUT/k8s-<version>, the go.mod of the kit and of testdata/consumer are
# rewritten to the release (k8s.io/kubernetes, its staging modules and the
# replace block, by hack/replaceblock -rewrite), tidied, and make runs there
# with the variables given in MAKEFLAGS-style arguments (RACE=, say). The
# modules with a release of their own (examples/kubeletruntime,
# hack/e2e/apiserver) keep it: in the copy they build the kit at their
# release, as make test already does.
set -euo pipefail
version=${1:?usage: hack/test-k8s.sh v1.MINOR.PATCH [make target ...]}
shift
[ $# -gt 0 ] || set -- test-kit test-consumer
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$root/_output}
GO=${GO:-go}
copy=$out/k8s-$version

start=$SECONDS
rm -rf "$copy"
mkdir -p "$copy"
(cd "$root" && git ls-files -z -c -o --exclude-standard | xargs -0 cp --parents -t "$copy" --)
for mod in . testdata/consumer; do
	(cd "$root" && "$GO" run ./hack/replaceblock -version "$version" -rewrite "$copy/$mod")
	(cd "$copy/$mod" && "$GO" mod tidy)
done
echo "test-k8s: $copy requires k8s.io/kubernetes $version ($((SECONDS - start)) s to copy and tidy); make $*"
make -C "$copy" OUTPUT="$copy/_output" GO="$GO" "$@"
echo "test-k8s: k8s.io/kubernetes $version passed make $* in $((SECONDS - start)) s"
