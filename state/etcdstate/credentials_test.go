package etcdstate_test

import (
	"fmt"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

func TestCredentialsNeverShown(t *testing.T) {
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
	o := newStack(endpoints)
	o.Username, o.Password, o.Create, o.Command = user, password, true, "reconcile apply"
	shown := func(what, text string) {
		t.Helper()
		for _, secret := range []string{user, password, wrong} {
			if strings.Contains(text, secret) {
				t.Errorf("%s %q shows a credential", what, text)
			}
		}
	}
	shown("Options printed", fmt.Sprintf("%v %+v %#v %s", o, o, o, o))

	s := mustOpen(t, o)
	shown("Location()", s.Location())
	if _, err := s.Put(state.Record{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHistory(state.HistoryEntry{Command: "apply"}); err != nil {
		t.Fatal(err)
	}
	// The other writer: wrong password, then the lock held.
	bad := o
	bad.Password = wrong
	if _, err := etcdstate.Open(ctx, bad); err == nil {
		t.Errorf("Open with a wrong password = nil error")
	} else {
		shown("Open with a wrong password: error", err.Error())
	}
	if _, err := etcdstate.Open(ctx, o); err == nil {
		t.Errorf("Open beside a writer = nil error")
	} else {
		shown("Open beside a writer: error", err.Error())
	}
	if _, err := etcdstate.Stacks(ctx, bad); err == nil {
		t.Errorf("Stacks with a wrong password = nil error")
	} else {
		shown("Stacks with a wrong password: error", err.Error())
	}

	// Nothing stored holds them.
	admin, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Username: "root", Password: "root-pw"})
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
