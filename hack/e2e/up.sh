#!/usr/bin/env bash
# up.sh: starts a containerd of its own: root, state, runc root, sockets and
# config under $E2E_DIR (see common.sh), the overlayfs snapshotter, runc with
# the cgroupfs driver (SystemdCgroup = false), the CRI plugin's sandbox image
# set to the locally built pause image and empty CNI directories (the suite's
# pods use the host network, so none needs CNI). Waits until the CRI answers
# on the socket. Refuses, with exit status 2 and touching nothing, when the
# containerd, a shim or a mount of an earlier run is still there (run.sh
# then leaves them alone at teardown).
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ -f "$E2E_PIDFILE" ] && kill -0 "$(cat "$E2E_PIDFILE")" 2>/dev/null; then
	refuse "a containerd (pid $(cat "$E2E_PIDFILE")) already runs for $E2E_DIR: run hack/e2e/down.sh first"
fi
[ -z "$(shim_pids)" ] || refuse "shims of an earlier run still serve $E2E_SOCK (pids $(echo $(shim_pids))): run hack/e2e/down.sh first"
[ -z "$(mounts_under "$E2E_DIR")" ] || refuse "mounts are left under $E2E_DIR from an earlier run: run hack/e2e/down.sh first"
rm -rf "$E2E_DIR"
mkdir -p "$E2E_ROOT" "$E2E_STATE" "$E2E_RUNC_ROOT" "$E2E_CNI/bin" "$E2E_CNI/net.d"

# Without CAP_SYS_RESOURCE (some sandboxed machines drop it even for root) no
# process may lower its oom_score_adj, and runc fails to start the sandbox
# the CRI plugin asks for at -998 ("can't get final child's PID from pipe"):
# restrict_oom_score_adj keeps every container at or above containerd's own.
cap_eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
restrict_oom=false
if (( (0x$cap_eff >> 24 & 1) == 0 )); then
	restrict_oom=true
	log "no CAP_SYS_RESOURCE: containers keep at least containerd's oom_score_adj (restrict_oom_score_adj)"
fi

# Plugins this run needs none of: other snapshotters, and the "opt" plugin,
# which would create /opt/containerd.
cat >"$E2E_CONFIG" <<TOML
version = 2
root = "$E2E_ROOT"
state = "$E2E_STATE"
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
]

[grpc]
  address = "$E2E_SOCK"

[ttrpc]
  address = "$E2E_SOCK.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$E2E_PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  enable_selinux = false
  restrict_oom_score_adj = $restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$E2E_RUNC_ROOT"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$E2E_CNI/bin"
    conf_dir = "$E2E_CNI/net.d"
TOML

# What teardown compares against: the network interfaces, and whether the
# shims' socket directory (always /run/containerd/s in containerd 1.6) was
# there before.
ls /sys/class/net >"$E2E_DIR/net-before"
[ -e /run/containerd ] || touch "$E2E_DIR/made-run-containerd"
# runc's cgroupfs driver puts every container under <controller>/k8s.io
# (containerd's namespaced cgroup) and leaves that parent when it is done.
for d in /sys/fs/cgroup/*/; do
	[ -e "$d$E2E_NS" ] || echo "$d$E2E_NS"
done >"$E2E_DIR/cgroups-made"

start=$(now)
# setsid: containerd and its shims get a session of their own, so that a
# signal to the caller's process group does not reach them half-way; down.sh
# stops them by pid.
setsid containerd --config "$E2E_CONFIG" >"$E2E_LOG" 2>&1 </dev/null &
echo $! >"$E2E_PIDFILE"
pid=$!

# Ready when the CRI plugin answers: 'ctr version' only proves the socket.
for _ in $(seq 1 300); do
	if ! kill -0 "$pid" 2>/dev/null; then
		tail -n 30 "$E2E_LOG" >&2
		die "containerd exited during start-up (log above, full log $E2E_LOG)"
	fi
	if [ -S "$E2E_SOCK" ] && plugins=$(ctr --address "$E2E_SOCK" plugins ls 2>/dev/null) &&
		grep -q 'io.containerd.grpc.v1 *cri *.* ok' <<<"$plugins"; then
		log "containerd (pid $pid) ready at $E2E_SOCK after $(elapsed "$start") s"
		exit 0
	fi
	sleep 0.1
done
tail -n 30 "$E2E_LOG" >&2
die "containerd did not become ready within 30 s (log above, full log $E2E_LOG)"
