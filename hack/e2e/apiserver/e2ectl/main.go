// Command e2ectl prepares and checks the API server of the end-to-end run
// (hack/e2e/apiserver-up.sh):
//
//	e2ectl pki -dir DIR -server https://127.0.0.1:PORT
//	    writes DIR/ca.crt, DIR/apiserver.{crt,key} (serving certificate for
//	    127.0.0.1, ::1 and localhost, signed by ca.crt), DIR/sa.key (the
//	    service-account signing key), DIR/tokens.csv (a static token of a
//	    user in system:masters) and DIR/kubeconfig (that server, that CA,
//	    that token).
//	e2ectl ready -etcd http://127.0.0.1:PORT [-pid PID] [-timeout D]
//	e2ectl ready -kubeconfig FILE [-pid PID] [-timeout D]
//	    waits until etcd's /health reports healthy, or the API server's
//	    /readyz answers ok; fails when PID exits first or the timeout
//	    passes, printing what the last probe saw.
//
// It needs nothing but Go: no openssl, no curl.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "e2ectl: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("missing command: want pki or ready")
	}
	switch args[0] {
	case "pki":
		return runPKI(args[1:], stderr)
	case "ready":
		return runReady(args[1:], stdout, stderr)
	default:
		return fmt.Errorf("unknown command %q: want pki or ready", args[0])
	}
}
