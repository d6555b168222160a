# apiserver-common.sh: sourced by the hack/e2e/apiserver-*.sh scripts. The
# paths and ports of the etcd and kube-apiserver the end-to-end run starts
# on loopback. Nothing of them lives outside $API_DIR except the binaries,
# which apiserver-build.sh builds into $API_BIN and keeps for the next run.
#
# Overrides: KRI_E2E_APISERVER_DIR (default /tmp/kri-e2e-apiserver),
# KRI_E2E_BIN (default $OUTPUT/bin, _output/bin), KRI_E2E_ETCD_PORT
# (default 22379; etcd's peer port is the next one) and
# KRI_E2E_APISERVER_PORT (default 26443).
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

API_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
API_MODULE=$API_REPO/hack/e2e/apiserver  # the build module (go.mod naming both)
API_OUT=${OUTPUT:-$API_REPO/_output}
case $API_OUT in /*) ;; *) API_OUT=$API_REPO/$API_OUT ;; esac
API_BIN=${KRI_E2E_BIN:-$API_OUT/bin}     # etcd, kube-apiserver, e2ectl
API_DIR=${KRI_E2E_APISERVER_DIR:-/tmp/kri-e2e-apiserver}
API_PKI=$API_DIR/pki                     # certificates, keys, token file (e2ectl pki)
API_KUBECONFIG=$API_PKI/kubeconfig       # what the tests get as KRI_E2E_KUBECONFIG
API_PORTS=$API_DIR/ports                 # the ports up.sh found free and took
ETCD_DATA=$API_DIR/etcd
ETCD_LOG=$API_DIR/etcd.log
ETCD_PIDFILE=$API_DIR/etcd.pid
APISERVER_LOG=$API_DIR/kube-apiserver.log
APISERVER_PIDFILE=$API_DIR/kube-apiserver.pid

ETCD_PORT=${KRI_E2E_ETCD_PORT:-22379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
APISERVER_PORT=${KRI_E2E_APISERVER_PORT:-26443}
ETCD_URL=http://127.0.0.1:$ETCD_PORT
ETCD_PEER_URL=http://127.0.0.1:$ETCD_PEER_PORT
APISERVER_URL=https://127.0.0.1:$APISERVER_PORT

# port_listening PORT succeeds when a TCP socket (IPv4 or IPv6, any
# address) listens on PORT.
port_listening() {
	local hex
	hex=$(printf ':%04X' "$1")
	awk -v p="$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# api_pids prints the pids of the processes whose command line names
# $API_DIR: the etcd and kube-apiserver up.sh started (their data, logs and
# certificates live there), whether or not a pid file still names them.
api_pids() {
	local p cmd
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" != "$$" ] || continue
		{ cmd=$(tr '\0' ' ' <"$p/cmdline"); } 2>/dev/null || continue
		case $cmd in
		*/etcd\ *"$API_DIR/"* | *kube-apiserver\ *"$API_DIR/"*) echo "${p#/proc/}" ;;
		esac
	done
}
