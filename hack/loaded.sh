#!/usr/bin/env bash
# loaded.sh BURNERS RUNS TARGET...: runs 'make TARGET' RUNS times for each
# TARGET, one run after the other, with BURNERS busy loops (each a shell
# spinning on one CPU at normal priority) running alongside the whole time,
# as on a CI runner that other jobs share: a gate that flakes here flakes
# there. Prints a line per run (result, wall time, load average at its end)
# and a tally; each run's output is in $OUTPUT/loaded/TARGET-N.log (and a failed
# e2e run's suite logs in $OUTPUT/loaded/e2e-N). Every run tests every
# package again (-count=1 through GOFLAGS): a cached test result is no run.
# Exits
# non-zero if any run failed. The busy loops end with the script, however it
# ends.
set -euo pipefail
if [ $# -lt 3 ]; then
	echo "usage: $0 BURNERS RUNS TARGET..." >&2
	exit 2
fi
burners=$1 runs=$2
shift 2
cd "$(dirname "$0")/.."
out=${OUTPUT:-_output}/loaded
mkdir -p "$out"

export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"

pids=()
stop_burners() {
	if [ ${#pids[@]} -gt 0 ]; then
		kill "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	fi
}
trap stop_burners EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < burners; i++)); do
	bash -c 'while :; do :; done' &
	pids+=($!)
done
echo "loaded.sh: $burners busy loops on $(nproc) CPUs; $runs run(s) of: $*"

failed=0 total=0
for target in "$@"; do
	for ((i = 1; i <= runs; i++)); do
		log="$out/$target-$i.log"
		start=$(date +%s)
		if make "$target" >"$log" 2>&1; then
			result=passed
		else
			result=FAILED
			failed=$((failed + 1))
			# make e2e's next run overwrites its logs: keep this one's.
			if [ "$target" = e2e ] && [ -d "$out/../e2e" ]; then
				rm -rf "$out/e2e-$i" && cp -r "$out/../e2e" "$out/e2e-$i"
				log="$log, $out/e2e-$i"
			fi
		fi
		total=$((total + 1))
		printf 'make %s run %d/%d: %s in %ds (load average %s; log %s)\n' \
			"$target" "$i" "$runs" "$result" $(($(date +%s) - start)) "$(cut -d' ' -f1-3 /proc/loadavg)" "$log"
	done
done
echo "loaded.sh: $((total - failed)) of $total run(s) passed"
[ "$failed" -eq 0 ]
