package etcdstate_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
)

// TestOpenUnreachable: with nothing listening at the endpoint, or a name
// that does not resolve, Open fails after the first contact, saying which
// endpoint does not answer and why, and what to check, rather than waiting
// out the request timeout (set here far beyond the test's own timeout, so
// that a wait for it fails the test).
func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for name, tc := range map[string]struct {
		endpoint, why string
		user          string
	}{
		"refused":             {endpoint: closed, why: "connection refused"},
		"refused, with login": {endpoint: closed, why: "connection refused", user: "ci"},
		"unresolved":          {endpoint: "etcd.invalid:2379", why: "no such host"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, readOnly := range []bool{true, false} {
				_, err := etcdstate.Open(t.Context(), etcdstate.Options{
					Endpoints: []string{tc.endpoint}, Prefix: "/reconcile/down", Stack: "prod",
					Username: tc.user, Password: "s3cret",
					RequestTimeout: time.Hour, DialTimeout: time.Hour,
					Options: state.Options{ReadOnly: readOnly, Create: true},
				})
				if !errors.Is(err, etcdstate.ErrUnreachable) {
					t.Fatalf("Open (read-only %v) = %v, want an error matching ErrUnreachable", readOnly, err)
				}
				for _, want := range []string{tc.endpoint, tc.why, "check that etcd runs and listens there"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("Open: %v\nwant it to say %q", err, want)
					}
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error holds the password: %v", err)
				}
			}
			if _, err := etcdstate.Stacks(t.Context(), etcdstate.Options{Endpoints: []string{tc.endpoint}, Prefix: "/reconcile/down", RequestTimeout: time.Hour}); !errors.Is(err, etcdstate.ErrUnreachable) {
				t.Errorf("Stacks = %v, want an error matching ErrUnreachable", err)
			}
		})
	}
}
