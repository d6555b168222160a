#!/usr/bin/env bash
# down.sh: tears down what up.sh started and verifies that nothing is left:
# every container and sandbox of the CRI is killed and removed, containerd is
# stopped, any container runc still knows is force-deleted, any shim still
# serving our socket is killed, everything mounted under $E2E_DIR is
# unmounted and $E2E_DIR removed. Fails, naming the leftover, when a shim, a
# containerd, a mount, a network interface or a cgroup of a container
# survives. Safe to run when nothing is up.
set -euo pipefail
. "$(dirname "$0")/common.sh"

runc_() { runc --root "$E2E_RUNC_ROOT/$E2E_NS" "$@"; }

# The ids of everything containerd and runc know, for the shims' sockets.
ids=()
pid=
[ -f "$E2E_PIDFILE" ] && pid=$(cat "$E2E_PIDFILE")
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -S "$E2E_SOCK" ]; then
	mapfile -t ids < <(ctr_ containers ls -q 2>/dev/null || true)
	# Tasks first (SIGKILL, then delete), then the containers: a shim
	# exits, removing its socket, once its last task is deleted.
	for id in $(ctr_ tasks ls -q 2>/dev/null || true); do
		ctr_ tasks kill --signal SIGKILL "$id" >/dev/null 2>&1 || true
	done
	for id in $(ctr_ tasks ls -q 2>/dev/null || true); do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			ctr_ tasks delete "$id" >/dev/null 2>&1 && break
			sleep 0.2
		done
	done
	for id in "${ids[@]}"; do
		ctr_ containers delete "$id" >/dev/null 2>&1 || true
	done
fi
if [ -d "$E2E_RUNC_ROOT/$E2E_NS" ]; then
	mapfile -t -O "${#ids[@]}" ids < <(runc_ list -q 2>/dev/null || true)
fi

if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	kill -TERM "$pid"
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "containerd (pid $pid) did not stop on SIGTERM within 10 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
fi

# Containers containerd left behind (it was killed, or a delete failed).
if [ -d "$E2E_RUNC_ROOT/$E2E_NS" ]; then
	for id in $(runc_ list -q 2>/dev/null || true); do
		log "runc still has container $id; deleting it"
		runc_ delete --force "$id" >/dev/null 2>&1 || true
	done
fi
for p in $(shim_pids); do
	log "shim (pid $p) still serves $E2E_SOCK; killing it"
	kill -KILL "$p" 2>/dev/null || true
done
for _ in $(seq 1 50); do
	[ -z "$(shim_pids)" ] && break
	sleep 0.1
done

# The shims' sockets: /run/containerd/s/<sha256 of socket/namespace/id>
# (containerd's runtime/v2/shim SocketAddress).
for id in "${ids[@]}"; do
	[ -n "$id" ] || continue
	s=/run/containerd/s/$(printf '%s' "$E2E_SOCK/$E2E_NS/$id" | sha256sum | awk '{print $1}')
	[ -e "$s" ] && rm -f "$s"
done
if [ -e "$E2E_DIR/made-run-containerd" ]; then
	rmdir /run/containerd/s /run/containerd 2>/dev/null || true
fi

for m in $(mounts_under "$E2E_DIR"); do
	umount "$m" 2>/dev/null || umount -l "$m"
done

leftovers=()
net_before=
[ -f "$E2E_DIR/net-before" ] && net_before=$(cat "$E2E_DIR/net-before")
if [ -n "$net_before" ] && [ "$(ls /sys/class/net)" != "$net_before" ]; then
	leftovers+=("network interfaces changed: before: $(echo $net_before), now: $(echo $(ls /sys/class/net))")
fi
# runc's cgroupfs driver names a container's cgroup after it; a deleted
# container leaves none.
for id in "${ids[@]}"; do
	[ -n "$id" ] || continue
	for cg in /sys/fs/cgroup/*/"$E2E_NS/$id" /sys/fs/cgroup/*/*/"$id"; do
		[ -d "$cg" ] && leftovers+=("cgroup $cg")
	done
done
# The cgroup parents that were not there before up.sh; rmdir removes only
# an empty cgroup, so one still holding a container is reported.
if [ -f "$E2E_DIR/cgroups-made" ]; then
	while read -r cg; do
		[ -d "$cg" ] || continue
		rmdir "$cg" 2>/dev/null || leftovers+=("cgroup $cg (not empty: $(find "$cg" -mindepth 1 -type d | awk 'NR <= 3' | tr '\n' ' '))")
	done <"$E2E_DIR/cgroups-made"
fi
[ -z "$(shim_pids)" ] || leftovers+=("shims serving $E2E_SOCK: pids $(echo $(shim_pids))")
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	leftovers+=("containerd pid $pid")
fi
[ -z "$(mounts_under "$E2E_DIR")" ] || leftovers+=("mounts under $E2E_DIR: $(echo $(mounts_under "$E2E_DIR"))")
finish_teardown teardown "$E2E_DIR" "torn down: no containerd, shim, mount or network interface left; $E2E_DIR removed"
