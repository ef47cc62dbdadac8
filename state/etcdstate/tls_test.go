package etcdstate_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"reconcile/state/etcdstate"
	"reconcile/state/etcdstate/etcdtest"
)

// tlsFailTimeout is the RequestTimeout and DialTimeout of the tests whose
// Open must fail.
const tlsFailTimeout = 5 * time.Second

// wantTLSError checks that err wraps ErrTLS and says every one of subs.
func wantTLSError(t *testing.T, what string, err error, subs ...string) {
	t.Helper()
	if !errors.Is(err, etcdstate.ErrTLS) {
		t.Errorf("%s: error %q does not wrap ErrTLS", what, err)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not say %q", what, err, s)
		}
	}
}

// TestTLSFilesChecked: TLS files that cannot be used fail Open at once,
// with an error naming the file, before any connection to etcd.
func TestTLSFilesChecked(t *testing.T) {
	t.Parallel()
	ca := etcdtest.NewCA(t)
	cert, key := ca.ClientCert(t)
	_, otherKey := etcdtest.NewCA(t).ClientCert(t)
	missing := t.TempDir() + "/missing.pem"
	notPEM := t.TempDir() + "/ca.txt"
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A listener as etcd, that counts connections: none may come.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()

	for _, tc := range []struct {
		name, ca, cert, key string
		want                []string
	}{
		{"certificate without key", ca.CertFile, cert, "", []string{cert, "without its key"}},
		{"key without certificate", ca.CertFile, "", key, []string{key, "without its certificate"}},
		{"missing CA file", missing, "", "", []string{missing, "cannot read the CA file"}},
		{"CA file without a certificate", notPEM, "", "", []string{notPEM, "holds no PEM certificate"}},
		{"key as CA file", key, "", "", []string{key, "not a certificate"}},
		{"missing certificate", ca.CertFile, missing, key, []string{missing, "cannot read the client certificate"}},
		{"missing key", ca.CertFile, cert, missing, []string{missing, "cannot read the client key"}},
		{"key of another certificate", ca.CertFile, cert, otherKey, []string{cert, otherKey, "private key does not match"}},
	} {
		o := newStack([]string{ln.Addr().String()})
		o.CAFile, o.CertFile, o.KeyFile, o.Create = tc.ca, tc.cert, tc.key, true
		o.RequestTimeout, o.DialTimeout = tlsFailTimeout, tlsFailTimeout
		start := time.Now()
		_, err := etcdstate.Open(t.Context(), o)
		if err == nil {
			t.Fatalf("%s: Open succeeded", tc.name)
		}
		if elapsed := time.Since(start); elapsed >= tlsFailTimeout {
			t.Errorf("%s: Open failed after %s, as if it had waited for etcd", tc.name, elapsed)
		}
		wantTLSError(t, tc.name, err, append(tc.want, o.String())...)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: error %q is a timeout", tc.name, err)
		}
		// The key's contents are never shown.
		if b, rerr := os.ReadFile(key); rerr == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if len(line) > 16 && !strings.HasPrefix(line, "-----") && strings.Contains(err.Error(), line) {
					t.Errorf("%s: error %q shows the key", tc.name, err)
				}
			}
		}
	}

	// A connection made now is accepted after any Open made: the first
	// accepted must be this one.
	probe, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	first := <-accepted
	defer first.Close()
	if first.RemoteAddr().String() != probe.LocalAddr().String() {
		t.Errorf("Open with unusable TLS files connected to etcd (from %s)", first.RemoteAddr())
	}
}
