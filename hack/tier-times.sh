#!/usr/bin/env bash
# Usage: hack/tier-times.sh [TIER ...]   (default: test test-real)
#
# Runs each tier of the kit's own checks (make TIER, one after the other)
# and writes what it took to testdata/tier-times.txt (TIER_TIMES=FILE for
# another file): per tier its wall seconds and its exit status, then per
# package of it the seconds go test printed for it, slowest first. The
# file is committed: a change that adds minutes to a tier shows in its own
# diff when its author runs 'make tier-times' (the README's "The kit's own
# checks" gives each tier's budget). The logs stay in
# $OUTPUT/tier-times/TIER.log.
#
# The figures are only comparable on one machine at one load: the header
# says which (cores, load average before the first tier). Every package is
# run again (-count=1 through GOFLAGS), so that a cached result is no
# figure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTPUT:-$root/_output}/tier-times
file=${TIER_TIMES:-$root/testdata/tier-times.txt}
[ $# -gt 0 ] || set -- test test-real
mkdir -p "$out"

{
	echo "# make tier-times ($(date -u +%Y-%m-%d), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)):"
	echo "# $(nproc) cores, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$file.new"

status=0
for tier in "$@"; do
	log=$out/$tier.log
	start=$SECONDS
	GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1" make -C "$root" "$tier" >"$log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	[ $rc -eq 0 ] || status=$rc
	echo "make $tier: $took s, exit $rc (log $log)"
	{
		echo
		echo "make $tier: $took s wall, exit $rc"
		# go test's result lines: "ok  <package>  <seconds>s" (FAIL too).
		# Those of test-k8s's copies come after a "test-k8s: ..." line and
		# are marked with its release.
		awk '/^test-k8s: .* requires k8s.io\/kubernetes/ { rel = " (" $NF ")" }
			($1 == "ok" || $1 == "FAIL") && NF >= 3 && $3 ~ /^[0-9.]+s$/ {
			sub(/s$/, "", $3); printf "  %8.1f s  %s %s%s\n", $3, $1, $2, rel }' "$log" | sort -rn
	} >>"$file.new"
done
mv "$file.new" "$file"
echo "wrote $file"
exit $status
