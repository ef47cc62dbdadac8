package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// certValidity is how long the certificates made here are valid: long
// enough for any test run, short enough that none is worth keeping. They
// are valid from a few minutes before they are made, for clocks that
// disagree a little.
const (
	certValidity = 2 * time.Hour
	certBackdate = 5 * time.Minute
)

// CA is a throwaway certificate authority for a test: an ECDSA P-256 key
// in memory and its self-signed certificate in the test's temporary
// directory.
type CA struct {
	// CertFile is the path of the CA's certificate, PEM-encoded: the file
	// a client or server that is to trust this CA is given.
	CertFile string

	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	n    atomic.Int64 // numbers the files of the certificates issued
}

// NewCA makes a certificate authority for tb, its files in a new
// temporary directory of tb.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	ca := &CA{dir: tb.TempDir()}
	key := newKey(tb)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "reconcile test CA", Organization: []string{"reconcile tests"}},
		NotBefore:             now.Add(-certBackdate),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("make a test CA: %v", err)
	}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		tb.Fatalf("make a test CA: %v", err)
	}
	ca.key = key
	ca.CertFile = filepath.Join(ca.dir, "ca.pem")
	writePEM(tb, ca.CertFile, "CERTIFICATE", der, 0o644)
	return ca
}

// ClientCert issues a client certificate (extended key usage client
// authentication, common name "reconcile-test-client") signed by ca and
// returns the paths of its PEM files: the certificate and its private
// key.
func (ca *CA) ClientCert(tb testing.TB) (certFile, keyFile string) {
	tb.Helper()
	return ca.issue(tb, "client", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "reconcile-test-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// serverCert issues a server certificate for the loopback addresses
// (127.0.0.1, ::1 and localhost) signed by ca and returns the paths of its
// PEM files.
func (ca *CA) serverCert(tb testing.TB) (certFile, keyFile string) {
	tb.Helper()
	return ca.issue(tb, "server", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// issue signs a certificate from tmpl with a new key and writes both as
// PEM files named for kind.
func (ca *CA) issue(tb testing.TB, kind string, tmpl *x509.Certificate) (certFile, keyFile string) {
	tb.Helper()
	key := newKey(tb)
	now := time.Now()
	tmpl.SerialNumber = serial(tb)
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-certBackdate), now.Add(certValidity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatalf("issue a test %s certificate: %v", kind, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("encode a test %s key: %v", kind, err)
	}
	name := fmt.Sprintf("%s-%d", kind, ca.n.Add(1))
	certFile = filepath.Join(ca.dir, name+".pem")
	keyFile = filepath.Join(ca.dir, name+"-key.pem")
	writePEM(tb, certFile, "CERTIFICATE", der, 0o644)
	writePEM(tb, keyFile, "PRIVATE KEY", keyDER, 0o600)
	return certFile, keyFile
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("generate a test key: %v", err)
	}
	return key
}

// serial returns a random certificate serial number.
func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		tb.Fatalf("generate a serial number: %v", err)
	}
	return n
}

func writePEM(tb testing.TB, path, typ string, der []byte, perm os.FileMode) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), perm); err != nil {
		tb.Fatal(err)
	}
}

// TLSMember is a one-member etcd cluster started by StartTLS, serving its
// clients over TLS.
type TLSMember struct {
	*Member
	// CAFile is the certificate of the CA that signed the member's server
	// certificate and the client certificate: what a client trusts.
	CAFile string
	// CertFile and KeyFile are a client certificate signed by that CA and
	// its private key.
	CertFile, KeyFile string
}

// Endpoints returns the member's client endpoint, as host:port, in a
// slice, as Start does.
func (m TLSMember) Endpoints() []string { return []string{m.Endpoint} }

// StartTLS starts a one-member etcd cluster for tb that serves its
// clients over TLS only, with a server certificate for 127.0.0.1, ::1
// and localhost signed by a new CA (NewCA). With clientCerts, it also
// requires of every client a certificate signed by that CA. It returns the
// member, the CA's certificate and a client certificate and key, all PEM
// files in tb's temporary directory. Traffic between members stays plain.
// The member is stopped when tb ends.
func StartTLS(tb testing.TB, clientCerts bool) TLSMember {
	tb.Helper()
	ca := NewCA(tb)
	serverCert, serverKey := ca.serverCert(tb)
	clientCert, clientKey := ca.ClientCert(tb)
	info := &transport.TLSInfo{CertFile: serverCert, KeyFile: serverKey}
	if clientCerts {
		// etcd requires and verifies a client certificate as soon as
		// it is given a CA to trust for them.
		info.ClientCertAuth, info.TrustedCAFile = true, ca.CertFile
	}
	m := startClusterRetry(tb, 1, info)[0]
	return TLSMember{Member: m, CAFile: ca.CertFile, CertFile: clientCert, KeyFile: clientKey}
}
