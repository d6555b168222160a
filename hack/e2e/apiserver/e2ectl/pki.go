package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// The files pki writes into its directory.
const (
	caFile         = "ca.crt"
	servingCert    = "apiserver.crt"
	servingKey     = "apiserver.key"
	serviceAcctKey = "sa.key"
	tokenFile      = "tokens.csv"
	kubeconfigFile = "kubeconfig"
)

// The identity of the static token: a member of system:masters, which every
// authorizer the API server has lets do everything.
const (
	adminUser  = "kri-e2e-admin"
	adminGroup = "system:masters"
)

// certValidity bounds the certificates: a run takes minutes.
const certValidity = 7 * 24 * time.Hour

func runPKI(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("pki", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the directory to write into (created if missing)")
	server := fs.String("server", "", "the API server's URL for the kubeconfig, https://127.0.0.1:PORT")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("pki: unexpected arguments %q", fs.Args())
	}
	return writePKI(*dir, *server)
}

// writePKI writes into dir the serving certificate of an API server at
// server (an https URL whose host is an IP address or localhost), the CA
// that signed it, a service-account signing key, a static token file and a
// kubeconfig that reaches server with that CA and token.
func writePKI(dir, server string) error {
	if dir == "" {
		return errors.New("pki: -dir is empty: want the directory to write the certificates, keys and kubeconfig into")
	}
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" {
		return fmt.Errorf("pki: -server %q is not an https URL with a host and a port (want https://127.0.0.1:PORT)", server)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: generating the CA key: %w", err)
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "kri-e2e-ca"}, caKey)
	if err != nil {
		return fmt.Errorf("pki: making the CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: generating the serving key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil {
		if !ip.IsLoopback() {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
	} else if u.Hostname() != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, u.Hostname())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("pki: signing the serving certificate: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return fmt.Errorf("pki: generating the service-account key: %w", err)
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	token := hex.EncodeToString(tok)
	caPEM, err := cert.EncodeCertificates(ca)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	servingPEM, err := cert.EncodeCertificates(&x509.Certificate{Raw: der})
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}

	files := []struct {
		name string
		data []byte
	}{
		{caFile, caPEM},
		{servingCert, servingPEM},
		{servingKey, keyPEM},
		{serviceAcctKey, saKey},
		// token,user,uid,"group1,group2": kube-apiserver --token-auth-file.
		{tokenFile, fmt.Appendf(nil, "%s,%s,%s,%q\n", token, adminUser, adminUser, adminGroup)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return fmt.Errorf("pki: %w", err)
		}
	}

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kri-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["kri-e2e"] = &clientcmdapi.Context{Cluster: "kri-e2e", AuthInfo: adminUser}
	cfg.CurrentContext = "kri-e2e"
	if err := clientcmd.WriteToFile(*cfg, filepath.Join(dir, kubeconfigFile)); err != nil {
		return fmt.Errorf("pki: writing the kubeconfig: %w", err)
	}
	return nil
}
