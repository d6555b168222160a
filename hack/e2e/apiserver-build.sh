#!/usr/bin/env bash
# apiserver-build.sh: builds kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver
# at the k8s.io/kubernetes version of the build module hack/e2e/apiserver),
# etcd (go.etcd.io/etcd/server/v3's etcdmain, at the version k8s.io/kubernetes
# requires) and e2ectl into $API_BIN with one 'go build': modules come from
# the Go module proxy, nothing else is downloaded. The Go build cache makes
# a second build a link at most; an up-to-date binary is not even relinked.
# kube-apiserver reports the module's version (/version) as a release build
# does.
set -euo pipefail
. "$(dirname "$0")/apiserver-common.sh"
GO=${GO:-go}

mkdir -p "$API_BIN"
cd "$API_MODULE"
version=$("$GO" list -m -f '{{.Version}}' k8s.io/kubernetes)
major=${version#v}
minor=${major#*.}
major=${major%%.*}
minor=${minor%%.*}
ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
start=$(now)
"$GO" build -ldflags "$ldflags" -o "$API_BIN/" k8s.io/kubernetes/cmd/kube-apiserver ./etcd ./e2ectl
log "built kube-apiserver $version, etcd $("$GO" list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) and e2ectl into $API_BIN in $(elapsed "$start") s"
