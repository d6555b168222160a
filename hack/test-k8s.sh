#!/usr/bin/env bash
# Usage: hack/test-k8s.sh v1.MINOR.PATCH [make target ...]
#
# Runs make targets (default: test-release) on a copy of
# this repository moved to another Kubernetes release: the files git tracks
# or would track (uncommitted changes included) are copied to
# $OUTPUT/k8s-<version>, and make runs there with the variables given in
# MAKEFLAGS-style arguments (RACE=, say). Before that the copy's go.mod
# files are rewritten to the release and tidied:
#
#   - for any target but test-vk, the kit's and testdata/consumer's:
#     k8s.io/kubernetes, its staging modules and the replace block
#     (hack/replaceblock -rewrite);
#   - for test-vk (or test, test-release), the vk modules' (VK_MODULES, default vk
#     testdata/vkconsumer): github.com/virtual-kubelet/virtual-kubelet at
#     the release VK_RELEASES names for the minor ("1.35=v1.13.0
#     1.37=v1.14.1 ..."), and k8s.io/api, apimachinery and client-go at
#     v0.MINOR.PATCH.
#
#   - for either, sim/'s (the kit's simulations: no k8s.io/kubernetes, but
#     the API types and client-go's fake clientset, sim/apiserver):
#     k8s.io/api, apimachinery and client-go at v0.MINOR.PATCH, so that
#     its own tests (test-kit's cd sim) run on the release's types as the
#     kit and the vk modules that build it do.
#
# The modules with a release of their own (examples/kubeletruntime,
# hack/e2e/apiserver) keep it: in the copy they build the kit at their
# release, as make test already does. suite/, the module of what the KRI
# and VK suites share, requires no k8s.io module: it is copied as it is.
set -euo pipefail
version=${1:?usage: hack/test-k8s.sh v1.MINOR.PATCH [make target ...]}
shift
[ $# -gt 0 ] || set -- test-release
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$root/_output}
GO=${GO:-go}
copy=$out/k8s-$version
minor=${version#v}
minor=${minor%.*}          # 1.37
staging=v0.${version#v1.} # v0.37.2

kit=false vkmods=false
for target in "$@"; do
	case $target in
	*=*) ;;                     # a variable for make
	test-vk) vkmods=true ;;
	test | test-release) kit=true vkmods=true ;;
	*) kit=true ;;
	esac
done
vk=
if $vkmods; then
	for pair in ${VK_RELEASES:-}; do
		[ "${pair%%=*}" = "$minor" ] && vk=${pair#*=}
	done
	if [ -z "$vk" ]; then
		echo "test-k8s: VK_RELEASES ('${VK_RELEASES:-}') names no virtual-kubelet release for Kubernetes $minor" >&2
		exit 2
	fi
fi

start=$SECONDS
rm -rf "$copy"
mkdir -p "$copy"
(cd "$root" && git ls-files -z -c -o --exclude-standard | xargs -0 cp --parents -t "$copy" --)
if $kit || $vkmods; then
	if ! log=$(cd "$copy/sim" && "$GO" get "k8s.io/api@$staging" "k8s.io/apimachinery@$staging" "k8s.io/client-go@$staging" 2>&1 && "$GO" mod tidy 2>&1); then
		echo "$log" >&2
		echo "test-k8s: moving sim to k8s.io/* $staging failed" >&2
		exit 1
	fi
	echo "test-k8s: sim/ of $copy requires k8s.io/api $staging"
fi
if $kit; then
	for mod in . testdata/consumer; do
		(cd "$root" && "$GO" run ./hack/replaceblock -version "$version" -rewrite "$copy/$mod")
		(cd "$copy/$mod" && "$GO" mod tidy)
	done
	echo "test-k8s: $copy requires k8s.io/kubernetes $version"
fi
if $vkmods; then
	for mod in ${VK_MODULES:-vk testdata/vkconsumer}; do
		# go get lists every module it upgrades: shown only when it fails.
		if ! log=$(cd "$copy/$mod" && "$GO" get "github.com/virtual-kubelet/virtual-kubelet@$vk" \
			"k8s.io/api@$staging" "k8s.io/apimachinery@$staging" "k8s.io/client-go@$staging" 2>&1 && "$GO" mod tidy 2>&1); then
			echo "$log" >&2
			echo "test-k8s: moving $mod to virtual-kubelet $vk and k8s.io/* $staging failed" >&2
			exit 1
		fi
	done
	echo "test-k8s: the vk modules of $copy require virtual-kubelet $vk and k8s.io/client-go $staging"
fi
echo "test-k8s: $((SECONDS - start)) s to copy and tidy; make $*"
make -C "$copy" OUTPUT="$copy/_output" GO="$GO" "$@"
echo "test-k8s: Kubernetes $version passed make $* in $((SECONDS - start)) s"
