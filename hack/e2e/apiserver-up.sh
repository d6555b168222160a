#!/usr/bin/env bash
# apiserver-up.sh: starts an etcd and a kube-apiserver of their own on
# loopback, built by apiserver-build.sh: e2ectl writes a CA, the API
# server's serving certificate (127.0.0.1, ::1, localhost), a
# service-account signing key, a static token of a user in system:masters
# and a kubeconfig ($API_KUBECONFIG) with that CA and token; etcd keeps its
# data in $API_DIR/etcd and listens on 127.0.0.1 only; kube-apiserver
# serves https://127.0.0.1:$APISERVER_PORT with token authentication only
# (no anonymous requests) and the AlwaysAllow authorizer. Waits until etcd
# reports healthy and the API server's /readyz answers ok, and prints the
# kubeconfig's path. Refuses, with exit status 2 and touching nothing, when
# a server of an earlier run still runs or a port is taken (run.sh then
# leaves them alone at teardown).
#
# kube-apiserver runs every default admission plugin except ServiceAccount,
# which would reject every pod until kube-controller-manager, which no one
# runs here, has made the namespace's default service account. Nothing else
# of a cluster runs either: no scheduler (a pod stays unbound unless its
# spec names a node), no kubelet (a graceful deletion of a bound pod waits
# for a delete with grace 0), no namespace controller (a deleted namespace
# stays Terminating), no garbage collector.
set -euo pipefail
. "$(dirname "$0")/apiserver-common.sh"

for b in etcd kube-apiserver e2ectl; do
	[ -x "$API_BIN/$b" ] || refuse "$API_BIN/$b is missing: run hack/e2e/apiserver-build.sh first"
done
for f in "$ETCD_PIDFILE" "$APISERVER_PIDFILE"; do
	if [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; then
		refuse "$(basename "$f" .pid) (pid $(cat "$f")) of an earlier run still runs for $API_DIR: run hack/e2e/apiserver-down.sh first"
	fi
done
[ -z "$(api_pids)" ] || refuse "processes of an earlier run still use $API_DIR (pids $(echo $(api_pids))): run hack/e2e/apiserver-down.sh first"
for p in "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT"; do
	! port_listening "$p" || refuse "port $p is taken on this machine: stop what listens there or choose others with KRI_E2E_ETCD_PORT (it and the next) and KRI_E2E_APISERVER_PORT"
done
rm -rf "$API_DIR"
mkdir -p -m 0700 "$API_DIR"
echo "$ETCD_PORT $ETCD_PEER_PORT $APISERVER_PORT" >"$API_PORTS"
"$API_BIN/e2ectl" pki -dir "$API_PKI" -server "$APISERVER_URL"

start=$(now)
# setsid: a session of their own, so that a signal to the caller's process
# group does not stop them half-way; apiserver-down.sh stops them by pid.
# --unsafe-no-fsync: the data is thrown away after the run, and fsyncs on a
# loaded machine would only slow every write.
setsid "$API_BIN/etcd" --name kri-e2e --data-dir "$ETCD_DATA" \
	--listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
	--listen-peer-urls "$ETCD_PEER_URL" --initial-advertise-peer-urls "$ETCD_PEER_URL" \
	--initial-cluster "kri-e2e=$ETCD_PEER_URL" --initial-cluster-state new \
	--unsafe-no-fsync --log-level warn \
	>"$ETCD_LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$ETCD_PIDFILE"
if ! "$API_BIN/e2ectl" ready -etcd "$ETCD_URL" -pid "$pid" -timeout "${KRI_E2E_ETCD_TIMEOUT:-60s}" >/dev/null; then
	tail -n 30 "$ETCD_LOG" >&2
	die "etcd did not become ready (log above, full log $ETCD_LOG)"
fi
log "etcd (pid $pid) ready at $ETCD_URL after $(elapsed "$start") s"

start=$(now)
setsid "$API_BIN/kube-apiserver" \
	--etcd-servers="$ETCD_URL" \
	--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
	--cert-dir="$API_DIR/certs" \
	--tls-cert-file="$API_PKI/apiserver.crt" --tls-private-key-file="$API_PKI/apiserver.key" \
	--token-auth-file="$API_PKI/tokens.csv" --anonymous-auth=false \
	--authorization-mode=AlwaysAllow \
	--service-account-issuer=https://kri-e2e.invalid \
	--service-account-key-file="$API_PKI/sa.key" --service-account-signing-key-file="$API_PKI/sa.key" \
	--service-cluster-ip-range=10.0.0.0/24 \
	--endpoint-reconciler-type=none \
	--disable-admission-plugins=ServiceAccount \
	--profiling=false \
	>"$APISERVER_LOG" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$APISERVER_PIDFILE"
if ! "$API_BIN/e2ectl" ready -kubeconfig "$API_KUBECONFIG" -pid "$pid" -timeout "${KRI_E2E_APISERVER_TIMEOUT:-300s}" >/dev/null; then
	tail -n 30 "$APISERVER_LOG" >&2
	die "kube-apiserver did not become ready (log above, full log $APISERVER_LOG)"
fi
log "kube-apiserver (pid $pid) ready at $APISERVER_URL after $(elapsed "$start") s; KRI_E2E_KUBECONFIG=$API_KUBECONFIG"
