# common.sh: sourced by the hack/e2e scripts. The paths of the private
# containerd the end-to-end run starts; nothing of it lives outside
# $E2E_DIR, except the shims' sockets, which containerd 1.6 always puts in
# /run/containerd/s (teardown removes the ones it made).
#
# KRI_E2E_DIR overrides the directory (default /tmp/kri-e2e). It must be
# short: the socket path must fit a Unix socket address (107 bytes).

E2E_DIR=${KRI_E2E_DIR:-/tmp/kri-e2e}
E2E_ROOT=$E2E_DIR/root           # containerd's root (content, snapshots)
E2E_STATE=$E2E_DIR/state         # containerd's state (tasks, shim bundles)
E2E_RUNC_ROOT=$E2E_DIR/runc      # runc's state
E2E_SOCK=$E2E_DIR/containerd.sock
E2E_CONFIG=$E2E_DIR/config.toml
E2E_LOG=$E2E_DIR/containerd.log
E2E_PIDFILE=$E2E_DIR/containerd.pid
E2E_IMAGES=$E2E_DIR/images
E2E_CNI=$E2E_DIR/cni             # empty CNI dirs: every pod uses the host network
E2E_NS=k8s.io                    # the containerd namespace of the CRI plugin

# The images the suite runs (conformance.DefaultImage, normalised as
# containerd names it) and the sandbox image configured for the CRI plugin.
E2E_BUSYBOX_IMAGE=docker.io/library/busybox:1.36
E2E_PAUSE_IMAGE=registry.k8s.io/pause:3.10

# The Debian packages the run needs, and a command each provides.
E2E_PACKAGES=(containerd:containerd runc:runc busybox-static:busybox)

log() { printf 'e2e: %s\n' "$*" >&2; }
die() { printf 'e2e: %s\n' "$*" >&2; exit 1; }

# An up script that finds another run's containerd or servers still up
# refuses with exit status 2, touching nothing: the caller's teardown must
# then leave that run alone (start_part).
refuse() {
	log "$*"
	exit 2
}

# start_part VAR SCRIPT: runs the up script SCRIPT with the variable VAR
# set to 1, which tells the caller's teardown to tear down what SCRIPT may
# have started, even half-way. When SCRIPT refuses (exit status 2) VAR is
# cleared, so that teardown leaves the other run alone. Exits with
# SCRIPT's status when it fails.
start_part() {
	local status=0
	printf -v "$1" 1
	bash "$2" || status=$?
	[ "$status" -ne 2 ] || printf -v "$1" ''
	[ "$status" -eq 0 ] || exit "$status"
}

# finish_teardown WHAT DIR DONE: the end of a down script, whose array
# leftovers lists what it found left behind. With nothing left it removes
# DIR and logs DONE; otherwise, or when DIR cannot be removed, it prints
# the leftovers of WHAT and exits 1.
finish_teardown() {
	if [ ${#leftovers[@]} -eq 0 ]; then
		rm -rf "$2"
		[ ! -e "$2" ] || leftovers+=("$2 could not be removed")
	fi
	if [ ${#leftovers[@]} -gt 0 ]; then
		printf 'e2e: %s left behind:\n' "$1" >&2
		printf '  - %s\n' "${leftovers[@]}" >&2
		exit 1
	fi
	log "$3"
}

# now prints the time in nanoseconds; elapsed START prints the seconds since.
now() { date +%s%N; }
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", (e - s) / 1e9 }'; }

ctr_() { ctr --address "$E2E_SOCK" --namespace "$E2E_NS" "$@"; }

# shim_pids prints the pids of the containerd shims serving our containerd:
# they are started with "-address $E2E_SOCK" on their command line.
shim_pids() {
	local p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case $cmd in
		*containerd-shim*" -address $E2E_SOCK "*) echo "${p#/proc/}" ;;
		esac
	done
}

# mounts_under DIR prints the mount points at or under DIR, deepest first.
mounts_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# The suites run in parallel processes (conformance.Config.Parallel) under
# the Ginkgo CLI of the kit's module: KRI_E2E_PROCS of them over containerd
# (default 3: containerd and runc take CPU too), KRI_E2E_APISERVER_PROCS
# against the API server (default 4: its specs mostly wait for back-off),
# KRI_E2E_VK_PROCS for each VK suite against it (default 6: its specs wait
# on VK's own periods, not the CPU; each suite's specs add up to about 19
# minutes, its longest, KVK-POD-008, to 3: with 4 processes the two suites
# took 334 s of .ci/run, the 20 minutes' largest share after make test);
# 1 runs a suite in one process. ginkgo_cli DIR builds the CLI into DIR
# (once) and prints its path.
E2E_PROCS=${KRI_E2E_PROCS:-3}
E2E_APISERVER_PROCS=${KRI_E2E_APISERVER_PROCS:-4}
E2E_VK_PROCS=${KRI_E2E_VK_PROCS:-6}
ginkgo_cli() {
	local dir=$1
	if [ ! -x "$dir/ginkgo" ]; then
		(cd "$repo" && "${GO:-go}" build -o "$dir/ginkgo" github.com/onsi/ginkgo/v2/ginkgo) || return
	fi
	printf '%s\n' "$dir/ginkgo"
}

# run_suite PROCS CLI BIN LOG SUMMARY JUNIT [ARGS...]: runs the conformance
# suite of the precompiled test binary BIN in PROCS processes under the
# Ginkgo CLI, its output in LOG, the summary (written by process 1 for the
# whole run) in SUMMARY and the JUnit report in JUNIT; ARGS go to the test
# binary. Prints the outcome lines; returns non-zero when the suite failed
# or wrote no summary (a skipped test never ran it). SUITE_FLAGS is the
# prefix of the suite's flags: kri (the default) or vk.
run_suite() {
	local procs=$1 cli=$2 bin=$3 log=$4 summary=$5 junit=$6 status=0
	shift 6
	rm -f "$summary"
	"$cli" --procs="$procs" --no-color --timeout="${E2E_TEST_TIMEOUT:-30m}" \
		--junit-report="$junit" "$bin" -- -"${SUITE_FLAGS:-kri}".summary="$summary" "$@" >"$log" 2>&1 || status=$?
	grep -E '^(Ginkgo ran|Test Suite|Ran [0-9]+ of|--- |PASS|FAIL)' "$log" >&2 || true
	if [ "$status" -eq 0 ] && [ ! -s "$summary" ]; then
		log "the suite wrote no summary: did the test skip? full log: $log"
		status=1
	fi
	return "$status"
}
