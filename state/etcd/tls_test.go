package etcd_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/state/etcd"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// tlsFailTimeout is the RequestTimeout and DialTimeout of the tests whose
// connections to etcd fail. The error can say why only if a connection
// failed before then: one fails within milliseconds of the first request.
const tlsFailTimeout = 5 * time.Second

// certFailTimeout is tlsFailTimeout for connections that etcd refuses for
// want of a client certificate it trusts: it says so in an alert after the
// handshake, which the client reads with its first answer, and that took
// more than 5 s on loaded machines.
const certFailTimeout = 15 * time.Second

// tlsOptions are options of m with TLS files: CA file, client certificate
// and key ("" for none).
func tlsOptions(m etcdtest.TLSMember, ca, cert, key string) etcd.Options {
	return etcd.Options{Endpoints: m.Endpoints(), Prefix: newPrefix(), CAFile: ca, CertFile: cert, KeyFile: key}
}

// openFails opens a writer of a stack with o, which must fail within
// about timeout, and returns the error.
func openFails(t *testing.T, what string, o etcd.Options, timeout time.Duration) error {
	t.Helper()
	o.RequestTimeout, o.DialTimeout = timeout, timeout
	start := time.Now()
	b, err := etcd.New(t.Context(), o)
	if err == nil {
		defer b.Close()
		var s kv.Store
		if s, err = b.Open(t.Context(), "prod", kv.Options{Write: true, Init: meta}); err == nil {
			s.Close()
			t.Fatalf("%s: Open succeeded, want an error", what)
		}
	}
	if elapsed := time.Since(start); elapsed > 3*timeout {
		t.Errorf("%s: failed after %s, want about %s at most", what, elapsed.Round(time.Millisecond), timeout)
	}
	t.Logf("%s: %v", what, err)
	return err
}

// wantTLSError checks that err wraps ErrTLS and says every one of subs.
func wantTLSError(t *testing.T, what string, err error, subs ...string) {
	t.Helper()
	if !errors.Is(err, etcd.ErrTLS) {
		t.Errorf("%s: error %q does not wrap ErrTLS", what, err)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not say %q", what, err, s)
		}
	}
}

// TestTLSServerCertificate: against etcd serving TLS, a backend that
// trusts etcd's CA works: values round-trip, a second writer finds the
// lock taken and gets it once the first closes, a reader sees the first
// writer's values, and the stacks are listed.
func TestTLSServerCertificate(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, false)
	b := newBackend(t, tlsOptions(m, m.CAFile, "", ""))
	first := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: []byte("first")})
	if err := first.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("tls")}}}); err != nil {
		t.Fatalf("Write over TLS: %v", err)
	}
	if v := get(t, open(t, b, "prod", kv.Options{}), "records/a"); string(v) != "tls" {
		t.Errorf("a reader's Get over TLS = %q", v)
	}
	if stacks, err := b.Stacks(t.Context()); err != nil || len(stacks) != 1 {
		t.Errorf("Stacks over TLS = %q, %v; want [prod]", stacks, err)
	}
	var locked *kv.LockedError
	if _, err := b.Open(t.Context(), "prod", kv.Options{Write: true}); !errors.As(err, &locked) || string(locked.Holder) != "first" {
		t.Errorf("a second writer over TLS: %v, want a *kv.LockedError naming the first", err)
	}
	waiting := make(chan struct{})
	opened := make(chan error, 1)
	go func() {
		s, err := b.Open(context.Background(), "prod", kv.Options{Write: true, LockTimeout: time.Minute, OnWait: func([]byte) { close(waiting) }})
		if err == nil {
			err = s.Close()
		}
		opened <- err
	}()
	<-waiting
	if err := first.Close(); err != nil {
		t.Fatalf("Close over TLS: %v", err)
	}
	if err := <-opened; err != nil {
		t.Errorf("the second writer, once the first closed: %v", err)
	}
}

// TestTLSClientCertificates: against etcd that requires client
// certificates, one signed by etcd's CA works; none, or one of another
// CA, fails in bounded time with an error that says so.
func TestTLSClientCertificates(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, true)
	t.Run("certificate", func(t *testing.T) {
		t.Parallel()
		s := open(t, newBackend(t, tlsOptions(m, m.CAFile, m.CertFile, m.KeyFile)), "prod", kv.Options{Write: true, Init: meta})
		if err := s.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("1")}}}); err != nil {
			t.Fatalf("Write with a client certificate: %v", err)
		}
	})
	t.Run("no certificate", func(t *testing.T) {
		t.Parallel()
		o := tlsOptions(m, m.CAFile, "", "")
		err := openFails(t, "Open without a client certificate", o, certFailTimeout)
		wantTLSError(t, "Open without a client certificate", err, o.String()+" (stack prod)", m.Endpoint, "requires a client certificate", "certificate required")
	})
	t.Run("no certificate, listing stacks", func(t *testing.T) {
		t.Parallel()
		o := tlsOptions(m, m.CAFile, "", "")
		o.RequestTimeout = certFailTimeout
		_, err := newBackend(t, o).Stacks(t.Context())
		wantTLSError(t, "Stacks without a client certificate", err, m.Endpoint, "requires a client certificate")
	})
	t.Run("certificate of another CA", func(t *testing.T) {
		t.Parallel()
		cert, key := etcdtest.NewCA(t).ClientCert(t)
		err := openFails(t, "Open with a certificate of another CA", tlsOptions(m, m.CAFile, cert, key), certFailTimeout)
		wantTLSError(t, "Open with a certificate of another CA", err, "refused the client certificate "+cert)
	})
	t.Run("no certificate, with a user name", func(t *testing.T) {
		t.Parallel()
		// The client logs in as it connects, bounded by DialTimeout.
		o := tlsOptions(m, m.CAFile, "", "")
		o.Username, o.Password = "ci", "pw-never-shown"
		err := openFails(t, "New with a user and no client certificate", o, certFailTimeout)
		wantTLSError(t, "New with a user and no client certificate", err, "requires a client certificate")
		if strings.Contains(err.Error(), o.Password) {
			t.Errorf("error %q shows the password", err)
		}
	})
}

// TestTLSWrongCA: a CA file whose CA did not sign etcd's certificate fails
// the handshake, and the error names the problem and the file.
func TestTLSWrongCA(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, false)
	other := etcdtest.NewCA(t)
	err := openFails(t, "Open trusting another CA", tlsOptions(m, other.CertFile, "", ""), tlsFailTimeout)
	wantTLSError(t, "Open trusting another CA", err,
		"TLS handshake with etcd at "+m.Endpoint, "certificate signed by unknown authority", "not signed by the CA of the CA file "+other.CertFile)
}

// TestTLSPlainMismatch: plain against etcd serving TLS, and TLS against
// etcd serving plain, fail in bounded time and say what to check.
func TestTLSPlainMismatch(t *testing.T) {
	t.Parallel()
	t.Run("plain client", func(t *testing.T) {
		t.Parallel()
		m := etcdtest.StartTLS(t, false)
		err := openFails(t, "Open without TLS", tlsOptions(m, "", "", ""), tlsFailTimeout)
		wantTLSError(t, "Open without TLS", err, "closed the connection without answering", "turn TLS on")
	})
	t.Run("TLS client", func(t *testing.T) {
		t.Parallel()
		plain := etcdtest.StartCluster(t, 1)[0]
		o := etcd.Options{Endpoints: []string{plain.Endpoint}, Prefix: newPrefix(), CAFile: etcdtest.NewCA(t).CertFile}
		err := openFails(t, "Open with TLS of a plain etcd", o, tlsFailTimeout)
		wantTLSError(t, "Open with TLS of a plain etcd", err, "during the TLS handshake", "leave TLS off")
	})
}

// TestTLSFilesChecked: TLS files that cannot be used fail New at once,
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
		o := etcd.Options{Endpoints: []string{ln.Addr().String()}, Prefix: "/reconcile/tls", CAFile: tc.ca, CertFile: tc.cert, KeyFile: tc.key,
			RequestTimeout: time.Hour, DialTimeout: time.Hour}
		_, err := etcd.New(t.Context(), o)
		if err == nil {
			t.Fatalf("%s: New succeeded", tc.name)
		}
		wantTLSError(t, tc.name, err, append(tc.want, o.String())...)
		if b, rerr := os.ReadFile(key); rerr == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if len(line) > 16 && !strings.HasPrefix(line, "-----") && strings.Contains(err.Error(), line) {
					t.Errorf("%s: error %q shows the key", tc.name, err)
				}
			}
		}
	}
	// A connection made now is accepted after any New made: the first
	// accepted must be this one.
	probe, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	first := <-accepted
	defer first.Close()
	if first.RemoteAddr().String() != probe.LocalAddr().String() {
		t.Errorf("New with unusable TLS files connected to etcd (from %s)", first.RemoteAddr())
	}
}
