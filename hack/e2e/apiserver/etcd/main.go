// Command etcd is etcd's own entry point (go.etcd.io/etcd/server/v3's main
// package does the same), built here so that the binary is named etcd and
// comes from the etcd server module at the version k8s.io/kubernetes
// requires. hack/e2e/apiserver-up.sh runs it as the API server's store.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
