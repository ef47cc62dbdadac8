package etcdstate_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// tlsFailTimeout is the RequestTimeout and DialTimeout of the tests whose
// connections to etcd fail, so that Open gives up soon. The error can say
// why only if a connection failed before then: one fails within
// milliseconds of the first request, so this is ample even for a loaded
// machine.
const tlsFailTimeout = 5 * time.Second

// certFailTimeout is tlsFailTimeout for connections that etcd refuses for
// want of a client certificate it trusts: it says so in an alert after the
// handshake, which the client reads with its first answer. With make
// test's packages running beside these tests under -race on two loaded
// cores, 5 s was twice not enough for that alert to be read, and the error
// was a bare timeout. Open waits this long in each such test (they run in
// parallel).
const certFailTimeout = 15 * time.Second

// tlsStack returns options naming a new stack on m, with TLS set by
// files: CA file, client certificate and key ("" for none).
func tlsStack(m etcdtest.TLSMember, ca, cert, key string) etcdstate.Options {
	o := newStack(m.Endpoints())
	o.CAFile, o.CertFile, o.KeyFile = ca, cert, key
	return o
}

// openFails opens o, which must fail, within a bounded time, and returns
// the error.
func openFails(t *testing.T, what string, o etcdstate.Options) error {
	t.Helper()
	return openFailsWithin(t, what, o, tlsFailTimeout)
}

// openFailsWithin is openFails with timeout as RequestTimeout and
// DialTimeout.
func openFailsWithin(t *testing.T, what string, o etcdstate.Options, timeout time.Duration) error {
	t.Helper()
	o.Create = true
	o.RequestTimeout, o.DialTimeout = timeout, timeout
	start := time.Now()
	s, err := etcdstate.Open(t.Context(), o)
	elapsed := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatalf("%s: Open succeeded, want an error", what)
	}
	// Open gives up after RequestTimeout; the rest is slack for a loaded
	// machine.
	if elapsed > 3*timeout {
		t.Errorf("%s: Open failed after %s, want about %s at most", what, elapsed.Round(time.Millisecond), timeout)
	}
	t.Logf("%s: Open failed after %s: %v", what, elapsed.Round(time.Millisecond), err)
	return err
}

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

// TestTLSServerCertificate: against etcd serving TLS, a store that trusts
// etcd's CA (CAFile only) works: records round-trip, a second writer finds
// the lock taken and gets it once the first closes, a reader sees the
// first writer's records, and the stacks are listed.
func TestTLSServerCertificate(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, false)
	o := tlsStack(m, m.CAFile, "", "")
	o.Create, o.Command = true, "reconcile apply"
	first := mustOpen(t, o)
	want := state.Record{Name: "pol", Type: "datadog:RestrictionPolicy", ID: "dashboard:tls"}
	if _, err := first.Put(want); err != nil {
		t.Fatalf("Put over TLS: %v", err)
	}
	got, ok, err := first.Get("pol")
	if err != nil || !ok || got.ID != want.ID || got.Type != want.Type {
		t.Fatalf("Get over TLS = %+v, %v, %v; want %+v", got, ok, err, want)
	}

	reader := o
	reader.ReadOnly = true
	r := mustOpen(t, reader)
	if got, ok, err := r.Get("pol"); err != nil || !ok || got.ID != want.ID {
		t.Errorf("a reader's Get over TLS = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if stacks, err := etcdstate.Stacks(t.Context(), reader); err != nil || len(stacks) != 1 || stacks[0] != o.Stack {
		t.Errorf("Stacks over TLS = %q, %v; want [%s]", stacks, err, o.Stack)
	}

	// The lock: taken, then waited for, then had once the first closes.
	second := o
	second.Command = "reconcile destroy"
	_, err = etcdstate.Open(t.Context(), second)
	if le := wantLocked(t, "a second writer over TLS", err, o); le.Holder.Command != "reconcile apply" {
		t.Errorf("the holder named = %+v, want the first writer", le.Holder)
	}
	waiting := make(chan struct{})
	second.LockTimeout = time.Minute
	second.OnWait = func(state.Holder) { close(waiting) }
	opened := make(chan error, 1)
	go func() {
		s, err := etcdstate.Open(context.Background(), second)
		if err == nil {
			_, ok, gerr := s.Get("pol")
			if !ok && gerr == nil {
				gerr = errors.New("the first writer's record is missing")
			}
			err = errors.Join(gerr, s.Close())
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
// certificates, a store with a certificate signed by etcd's CA works; one
// without a certificate, or with one of another CA, fails in bounded time
// with an error that says so.
func TestTLSClientCertificates(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, true)

	t.Run("certificate", func(t *testing.T) {
		t.Parallel()
		o := tlsStack(m, m.CAFile, m.CertFile, m.KeyFile)
		o.Create = true
		s := mustOpen(t, o)
		if _, err := s.Put(state.Record{Name: "a", ID: "1"}); err != nil {
			t.Fatalf("Put with a client certificate: %v", err)
		}
		if got, ok, err := s.Get("a"); err != nil || !ok || got.ID != "1" {
			t.Errorf("Get with a client certificate = %+v, %v, %v", got, ok, err)
		}
		second := o
		_, err := etcdstate.Open(t.Context(), second)
		wantLocked(t, "a second writer with a client certificate", err, o)
	})
	t.Run("no certificate", func(t *testing.T) {
		t.Parallel()
		o := tlsStack(m, m.CAFile, "", "")
		err := openFailsWithin(t, "Open without a client certificate", o, certFailTimeout)
		wantTLSError(t, "Open without a client certificate", err,
			o.String(), m.Endpoint, "requires a client certificate", "certificate required")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %q does not wrap context.DeadlineExceeded", err)
		}
	})
	t.Run("no certificate, listing stacks", func(t *testing.T) {
		t.Parallel()
		o := tlsStack(m, m.CAFile, "", "")
		o.RequestTimeout, o.DialTimeout = certFailTimeout, certFailTimeout
		start := time.Now()
		_, err := etcdstate.Stacks(t.Context(), o)
		if elapsed := time.Since(start); elapsed > 3*certFailTimeout {
			t.Errorf("Stacks failed after %s, want about %s at most", elapsed.Round(time.Millisecond), certFailTimeout)
		}
		wantTLSError(t, "Stacks without a client certificate", err, m.Endpoint, "requires a client certificate")
	})
	t.Run("certificate of another CA", func(t *testing.T) {
		t.Parallel()
		cert, key := etcdtest.NewCA(t).ClientCert(t)
		err := openFailsWithin(t, "Open with a certificate of another CA", tlsStack(m, m.CAFile, cert, key), certFailTimeout)
		wantTLSError(t, "Open with a certificate of another CA", err, "refused the client certificate "+cert)
	})
	t.Run("no certificate, with a user name", func(t *testing.T) {
		t.Parallel()
		// The client authenticates as it connects, bounded by DialTimeout.
		o := tlsStack(m, m.CAFile, "", "")
		o.Username, o.Password = "ci", "pw-never-shown"
		err := openFailsWithin(t, "Open with a user and no client certificate", o, certFailTimeout)
		wantTLSError(t, "Open with a user and no client certificate", err, "requires a client certificate")
		if strings.Contains(err.Error(), o.Password) {
			t.Errorf("error %q shows the password", err)
		}
	})
}

// TestTLSWrongCA: a CA file whose CA did not sign etcd's certificate fails
// the handshake, and the error names the certificate problem and the
// file.
func TestTLSWrongCA(t *testing.T) {
	t.Parallel()
	m := etcdtest.StartTLS(t, false)
	other := etcdtest.NewCA(t)
	err := openFails(t, "Open trusting another CA", tlsStack(m, other.CertFile, "", ""))
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
		err := openFails(t, "Open without TLS", tlsStack(m, "", "", ""))
		wantTLSError(t, "Open without TLS", err, "closed the connection without answering", "turn TLS on")
	})
	t.Run("TLS client", func(t *testing.T) {
		t.Parallel()
		plain := etcdtest.StartCluster(t, 1)[0]
		o := newStack([]string{plain.Endpoint})
		o.CAFile = etcdtest.NewCA(t).CertFile
		err := openFails(t, "Open with TLS of a plain etcd", o)
		wantTLSError(t, "Open with TLS of a plain etcd", err, "during the TLS handshake", "leave TLS off")
	})
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
