package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

func TestWritePKI(t *testing.T) {
	dir := t.TempDir()
	if err := writePKI(dir, "https://127.0.0.1:6443"); err != nil {
		t.Fatalf("writePKI: %v", err)
	}
	cas, err := cert.CertsFromFile(filepath.Join(dir, caFile))
	if err != nil || len(cas) != 1 || !cas[0].IsCA {
		t.Fatalf("%s: want one CA certificate, got %d (err %v)", caFile, len(cas), err)
	}
	leaves, err := cert.CertsFromFile(filepath.Join(dir, servingCert))
	if err != nil || len(leaves) != 1 {
		t.Fatalf("%s: want one certificate, got %d (err %v)", servingCert, len(leaves), err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cas[0])
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := leaves[0].Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the serving certificate does not verify for %s against %s: %v", host, caFile, err)
		}
	}
	if _, err := leaves[0].Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: x509.NewCertPool()}); err == nil {
		t.Errorf("the serving certificate verifies without %s as root: want it signed by that CA only", caFile)
	}
	key, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, servingKey))
	if err != nil {
		t.Fatalf("%s: %v", servingKey, err)
	}
	if pub, ok := leaves[0].PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(key.(*ecdsa.PrivateKey).Public()) {
		t.Errorf("%s does not hold the private key of %s", servingKey, servingCert)
	}
	if _, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, serviceAcctKey)); err != nil {
		t.Errorf("%s: want a private key kube-apiserver can sign with: %v", serviceAcctKey, err)
	}

	f, err := os.Open(filepath.Join(dir, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		t.Fatalf("%s: want one row token,user,uid,groups, got %q (err %v)", tokenFile, rows, err)
	}
	if row := rows[0]; len(row[0]) < 32 || row[1] != adminUser || row[3] != adminGroup {
		t.Errorf("%s: got %q, want a token of at least 32 characters for %s in %s", tokenFile, row, adminUser, adminGroup)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, kubeconfigFile))
	if err != nil {
		t.Fatalf("loading the kubeconfig: %v", err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, caFile))
	if cfg.Host != "https://127.0.0.1:6443" || cfg.BearerToken != rows[0][0] || !bytes.Equal(cfg.CAData, caPEM) {
		t.Errorf("kubeconfig: got host %q, token %q, CA data %d bytes; want https://127.0.0.1:6443, the token of %s and %s",
			cfg.Host, cfg.BearerToken, len(cfg.CAData), tokenFile, caFile)
	}
	for _, name := range []string{servingKey, serviceAcctKey, tokenFile, kubeconfigFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: want it readable by its owner only, got %v (err %v)", name, fi.Mode(), err)
		}
	}
}

// TestPKIServesTLS serves HTTPS with the written certificate and reaches it
// with the written kubeconfig, as kube-apiserver and its clients do.
func TestPKIServesTLS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writePKI(dir, "https://"+ln.Addr().String()); err != nil {
		t.Fatalf("writePKI: %v", err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, servingCert), filepath.Join(dir, servingKey))
	if err != nil {
		t.Fatalf("loading the serving pair: %v", err)
	}
	token := strings.Split(readFile(t, filepath.Join(dir, tokenFile)), ",")[0]
	var ready bool
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Header.Get("Authorization") != "Bearer "+token:
				http.Error(w, "unauthorized", http.StatusUnauthorized)
			case r.URL.Path != "/readyz":
				http.NotFound(w, r)
			case !ready:
				ready = true // the next probe sees ready
				http.Error(w, "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed", http.StatusInternalServerError)
			default:
				w.Write([]byte("ok"))
			}
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}},
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })

	p, err := apiserverProbe(filepath.Join(dir, kubeconfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if ok, saw := p(t.Context()); ok || !strings.Contains(saw, "[-]etcd failed: reason withheld; readyz check failed") {
		t.Errorf("first probe: got ready %v, saw %q; want not ready, naming the failing check", ok, saw)
	}
	if ok, saw := p(t.Context()); !ok {
		t.Errorf("second probe: got not ready (saw %q), want ready: the server answers ok", saw)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPKIBadInput(t *testing.T) {
	for _, tc := range []struct {
		dir, server, want string
	}{
		{"", "https://127.0.0.1:6443", "-dir is empty"},
		{t.TempDir(), "", `-server "" is not an https URL`},
		{t.TempDir(), "http://127.0.0.1:6443", `-server "http://127.0.0.1:6443" is not an https URL`},
		{t.TempDir(), "https://127.0.0.1", `-server "https://127.0.0.1" is not an https URL with a host and a port`},
	} {
		err := writePKI(tc.dir, tc.server)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("writePKI(%q, %q): got %v, want an error containing %q", tc.dir, tc.server, err, tc.want)
		}
	}
	var stderr bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "missing command"},
		{[]string{"certs"}, `unknown command "certs"`},
		{[]string{"pki", "-dir", t.TempDir(), "-server", "https://127.0.0.1:1", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"pki", "-nope"}, "flag provided but not defined"},
		{[]string{"ready"}, "want exactly one of -etcd and -kubeconfig"},
		{[]string{"ready", "-etcd", "http://127.0.0.1:1", "-kubeconfig", "x"}, "want exactly one of -etcd and -kubeconfig"},
		{[]string{"ready", "-etcd", "http://127.0.0.1:1", "-timeout", "0s"}, "-timeout 0s is not positive"},
		{[]string{"ready", "-kubeconfig", filepath.Join(t.TempDir(), "missing")}, "loading the kubeconfig"},
	} {
		err := run(tc.args, &stderr, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q): got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
