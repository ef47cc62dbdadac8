package etcd_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state/etcd"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// TestCredentials: with authentication on, a user and password work; a
// wrong password fails saying where to give them; and no message, and no
// key or value stored, shows either.
func TestCredentials(t *testing.T) {
	t.Parallel()
	const (
		user     = "reconcile-ci-user"
		password = "pw-Zq81-never-shown"
		wrong    = "pw-Wr0ng-never-shown"
	)
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	ctx := t.Context()
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, user, password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, user, "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("set up authentication: %v", err)
		}
	}
	shown := func(what, text string) {
		t.Helper()
		for _, secret := range []string{user, password, wrong} {
			if strings.Contains(text, secret) {
				t.Errorf("%s %q shows a credential", what, text)
			}
		}
	}
	o := etcd.Options{Endpoints: endpoints, Prefix: newPrefix(), Username: user, Password: password}
	shown("Options printed", fmt.Sprintf("%v %+v %#v %s", o, o, o, o))
	b := newBackend(t, o)
	shown("Describe", b.Describe())
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: []byte("holder")})
	shown("Describe", w.Describe())
	if err := w.Write(ctx, &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("a")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, "prod", kv.Options{Write: true}); err == nil {
		t.Errorf("Open beside a writer = nil error")
	} else {
		shown("Open beside a writer: error", err.Error())
	}
	bad := o
	bad.Password = wrong
	if _, err := etcd.New(ctx, bad); err == nil || !strings.Contains(err.Error(), "ETCDCTL_USER and ETCDCTL_PASSWORD") {
		t.Errorf("New with a wrong password = %v, want an error saying where to give them", err)
	} else {
		shown("New with a wrong password: error", err.Error())
	}
	admin, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Username: "root", Password: "root-pw", Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	resp, err := admin.Get(ctx, "", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("read every key: %d keys, %v", len(resp.Kvs), err)
	}
	for _, kv := range resp.Kvs {
		shown("stored key "+string(kv.Key), string(kv.Key)+string(kv.Value))
	}
}

// TestUnreachable: with nothing listening at the endpoint, or a name that
// does not resolve, New fails after the first contact, saying which
// endpoint does not answer and why, and what to check, rather than
// waiting out the request timeout (set here far beyond the test's own).
func TestUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for name, tc := range map[string]struct{ endpoint, why, user string }{
		"refused":             {endpoint: closed, why: "connection refused"},
		"refused, with login": {endpoint: closed, why: "connection refused", user: "ci"},
		"unresolved":          {endpoint: "etcd.invalid:2379", why: "no such host"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := etcd.New(t.Context(), etcd.Options{
				Endpoints: []string{tc.endpoint}, Prefix: "/reconcile/down",
				Username: tc.user, Password: "s3cret", RequestTimeout: time.Hour, DialTimeout: time.Hour,
			})
			if !errors.Is(err, kv.ErrUnreachable) {
				t.Fatalf("New = %v, want an error matching kv.ErrUnreachable", err)
			}
			for _, want := range []string{tc.endpoint, tc.why, "check that etcd runs and listens there", "etcd://"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("New: %v\nwant it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error holds the password: %v", err)
			}
		})
	}
}

// TestBadOptions: options that cannot name a cluster, or a stack, are
// refused without a word of credentials.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]etcd.Options{
		"no endpoints":    {Prefix: "/p"},
		"relative prefix": {Endpoints: []string{"127.0.0.1:1"}, Prefix: "p"},
		"user in URL":     {Endpoints: []string{"u:pw-never-shown@127.0.0.1:1"}, Prefix: "/p"},
	} {
		if _, err := etcd.New(t.Context(), o); err == nil || strings.Contains(err.Error(), "pw-never-shown") {
			t.Errorf("%s: New = %v, want an error without credentials", name, err)
		}
	}
	b := newBackend(t, etcd.Options{Endpoints: etcdtest.Start(t), Prefix: newPrefix()})
	for _, stack := range []string{"", "a/b", "..", "a\x00"} {
		if _, err := b.Open(t.Context(), stack, kv.Options{}); err == nil {
			t.Errorf("Open(%q) = nil error", stack)
		}
	}
}
