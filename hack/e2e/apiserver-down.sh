#!/usr/bin/env bash
# apiserver-down.sh: tears down what apiserver-up.sh started and verifies
# that nothing is left: stops kube-apiserver, then etcd (SIGTERM, SIGKILL
# after 15 s), kills any other process whose command line names $API_DIR,
# and removes $API_DIR. Fails, naming the leftover, when such a process
# survives, a port the run took is still listened on, or the directory
# cannot be removed. Keeps the binaries in $API_BIN (the next run's build
# cache). Safe to run when nothing is up.
set -euo pipefail
. "$(dirname "$0")/apiserver-common.sh"

# stop NAME PIDFILE: SIGTERM, then SIGKILL when it has not exited in 15 s.
stop() {
	local name=$1 pid
	[ -f "$2" ] || return 0
	pid=$(cat "$2")
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	log "$name (pid $pid) did not stop on SIGTERM within 15 s; killing it"
	kill -KILL "$pid" 2>/dev/null || true
}

# The API server first: it holds connections to etcd.
stop kube-apiserver "$APISERVER_PIDFILE"
stop etcd "$ETCD_PIDFILE"
for p in $(api_pids); do
	log "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)) still uses $API_DIR; killing it"
	kill -KILL "$p" 2>/dev/null || true
done
for _ in $(seq 1 50); do
	[ -z "$(api_pids)" ] && break
	sleep 0.1
done

leftovers=()
[ -z "$(api_pids)" ] || leftovers+=("processes using $API_DIR: pids $(echo $(api_pids))")
if [ -f "$API_PORTS" ]; then
	for p in $(cat "$API_PORTS"); do
		! port_listening "$p" || leftovers+=("port $p is still listened on")
	done
fi
finish_teardown "API server teardown" "$API_DIR" "torn down: no etcd, kube-apiserver or listener left; $API_DIR removed"
