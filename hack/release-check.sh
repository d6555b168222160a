#!/usr/bin/env bash
# make release-check: use the kit as a user does who gets it from a module
# proxy (the README's "Cutting a release").
#
# 1. Builds a file GOPROXY from the working tree (go run ./hack/release
#    proxy): suite, sim, the kit and vk at a test version V, as the tags
#    suite/vX, sim/vX, vX and vk/vX would publish them after a release
#    commit (the sibling requirements bumped to V). It fails when a published module
#    requires a sibling at a version that proxy cannot serve.
# 2. From a fresh KRI consumer module whose go.mod has only the k8s.io
#    replace block (make replace-block): the README's install line for the
#    kit, go mod tidy, go vet, and the conformance gate on the fake
#    (hack/release/testdata/kriconsumer).
# 3. From a fresh VK consumer module with no replace at all: the README's
#    install line for vk, go mod tidy, go vet, vk.Run on a small provider
#    (testdata/vkconsumer's echoprovider), and a check that its build list
#    has no k8s.io/kubernetes.
#
# Everything but the kit's modules comes from the module proxy the go
# command is set up with (go env GOPROXY, without "direct"); the kit's
# modules come from the file proxy only (GONOSUMDB: they are in no checksum
# database). RELEASE_CHECK_PROXY_FLAGS passes flags to hack/release proxy
# (-no-bump, -modules) to see the check fail. RACE= (default -race, as make
# test builds) keeps vet and test on the build cache make test fills.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
RACE=${RACE--race}
t0=$SECONDS
step() { printf '[release-check %3ds] %s\n' $((SECONDS - t0)) "$*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kri-release-check.XXXXXX")
modcache=$($GO env GOMODCACHE)
version=
cleanup() {
	# The kit's test versions in the shared module cache: a version is the
	# hash of the tree, so nothing would reuse them.
	if [ -n "$version" ]; then
		for m in testkit testkit/suite testkit/sim testkit/vk; do
			for d in "$modcache/github.com/kri-kit/$m@$version" "$modcache/cache/download/github.com/kri-kit/$m/@v"; do
				[ -e "$d" ] || continue
				chmod -R u+w "$d" 2>/dev/null || true
				if [ "${d##*/}" = "@v" ]; then rm -f "$d/$version".*; else rm -rf "$d"; fi
			done
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT

step "building the file GOPROXY from the working tree"
# shellcheck disable=SC2086
version=$($GO run ./hack/release proxy -dir "$work/proxy" ${RELEASE_CHECK_PROXY_FLAGS:-})
step "serving github.com/kri-kit/testkit, /suite, /sim and /vk at $version"

# The README's k8s.io replace block, printed from the kit's own module
# before the environment below points the go command elsewhere.
replaceBlock=$($GO run ./hack/replaceblock)

upstream=$($GO env GOPROXY | tr ',|' '\n\n' | grep -v -x -e direct -e off -e '' | paste -sd, -)
export GOPROXY="file://$work/proxy,${upstream:-https://proxy.golang.org}"
export GONOSUMDB=github.com/kri-kit GONOPROXY= GOPRIVATE= GOFLAGS=-mod=mod GOWORK=off GIT_TERMINAL_PROMPT=0
export GINKGO_NO_COLOR=TRUE

# installLine prints the README's install line for module (the one a user
# types): a line "go get <module>@latest" of a sh block.
installLine() {
	local line
	line=$(grep -F -x -m1 "go get $1@latest" README.md) || {
		echo "README.md has no line 'go get $1@latest': the release check runs the README's install lines" >&2
		return 1
	}
	printf '%s\n' "$line"
}

# runIn dir cmd...: runs cmd in dir, printing it.
runIn() {
	local dir=$1
	shift
	step "($(basename "$dir")) $*"
	(cd "$dir" && "$@")
}

# The KRI consumer.
kri=$work/kriconsumer
mkdir -p "$kri"
cp hack/release/testdata/kriconsumer/*.go "$kri/"
{
	printf 'module example.com/kriconsumer\n\ngo 1.26.0\n\n'
	printf '%s\n' "$replaceBlock"
} >"$kri/go.mod"
read -r -a get <<<"$(installLine github.com/kri-kit/testkit)"
runIn "$kri" "${get[@]}"
runIn "$kri" $GO mod tidy
runIn "$kri" $GO vet $RACE ./...
runIn "$kri" $GO test $RACE -count=1 -run '^TestConformance$' . -args -kri.summary="$kri/summary.txt"
grep -x 'verdict: conformant.*' "$kri/summary.txt" || { echo "the KRI consumer's summary has no 'verdict: conformant'" >&2; exit 1; }

# The VK consumer.
vkc=$work/vkconsumer
mkdir -p "$vkc"
cp -r testdata/vkconsumer/echoprovider "$vkc/"
printf 'module example.com/vkconsumer\n\ngo 1.26.0\n' >"$vkc/go.mod"
read -r -a get <<<"$(installLine github.com/kri-kit/testkit/vk)"
runIn "$vkc" "${get[@]}"
runIn "$vkc" $GO mod tidy
if grep -n '^replace\|=>' "$vkc/go.mod"; then
	echo "the VK consumer's go.mod has a replace directive: it must need none" >&2
	exit 1
fi
runIn "$vkc" $GO vet $RACE ./...
runIn "$vkc" $GO test $RACE -count=1 -run '^TestConformance$' ./echoprovider -args -vk.summary="$vkc/summary.txt"
grep -x 'verdict: conformant.*' "$vkc/summary.txt" || { echo "the VK consumer's summary has no 'verdict: conformant'" >&2; exit 1; }
if (cd "$vkc" && $GO list -m all) | grep -E '^k8s.io/kubernetes '; then
	echo "the VK consumer's build list has k8s.io/kubernetes (above): a VK provider's module must not need it" >&2
	exit 1
fi
step "ok: a KRI consumer (the k8s.io replace block only) and a VK consumer (no replace) built, vetted and gated the kit at $version from a module proxy"
