package etcd_test

import (
	"errors"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcd"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// TestEarlierReconcile: a stack written by the reconcile before this
// package (package etcdstate) reads the same, key for key and byte for
// byte; and each locks the other out, naming the holder, so that runners
// of both versions can share a stack while a fleet upgrades.
func TestEarlierReconcile(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := etcdstate.Options{Endpoints: endpoints, Prefix: newPrefix(), Stack: "prod"}
	o.Create, o.Command = true, "reconcile apply"
	old, err := etcdstate.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Put(state.Record{Name: "a", Type: "t", ID: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := old.PutIntent(state.Intent{Name: "b", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	if err := old.AddHistory(state.HistoryEntry{Command: "apply"}); err != nil {
		t.Fatal(err)
	}

	b := newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: o.Prefix})
	var locked *kv.LockedError
	_, err = b.Open(t.Context(), "prod", kv.Options{Write: true})
	if !errors.As(err, &locked) {
		t.Fatalf("Open beside an earlier writer = %v, want a *kv.LockedError", err)
	}
	if h, err := state.DecodeHolder(locked.Holder); err != nil || h.Command != "reconcile apply" || h.PID != os.Getpid() {
		t.Errorf("the earlier holder = %+v, %v", h, err)
	}
	resp, err := cli.Get(t.Context(), o.Prefix+"/prod/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, kv := range resp.Kvs {
		if k := string(kv.Key)[len(o.Prefix+"/prod/"):]; k != "lock" {
			want[k] = string(kv.Value)
		}
	}
	got := map[string]string{}
	r := open(t, b, "prod", kv.Options{})
	if err := r.Read(t.Context(), func(v kv.View) error {
		return v.Scan("", "", false, func(k string, v []byte) error { got[k] = string(v); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) < 8 || len(got) != len(want) {
		t.Errorf("read %d keys of the %d stored", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q reads %q, stored %q", k, got[k], v)
		}
	}
	if stacks, err := b.Stacks(t.Context()); err != nil || len(stacks) != 1 || stacks[0] != "prod" {
		t.Errorf("Stacks = %q, %v", stacks, err)
	}

	old.Close()
	holder := state.EncodeHolder(state.NewHolder("reconcile destroy"))
	w := open(t, b, "prod", kv.Options{Write: true, Holder: holder})
	o.Create = false
	_, err = etcdstate.Open(t.Context(), o)
	var oldLocked *state.LockedError
	if !errors.As(err, &oldLocked) || oldLocked.Holder.Command != "reconcile destroy" {
		t.Errorf("an earlier writer beside this one = %v, want a *state.LockedError naming it", err)
	}
	// What this one writes, the earlier one reads.
	rec, err := state.EncodeRecord(state.Record{Name: "c", Type: "t", ID: "3", Serial: 2})
	if err != nil {
		t.Fatal(err)
	}
	bt := &kv.Batch{Marker: "meta/serial"}
	bt.Put("records/c", rec)
	bt.Put("meta/serial", state.EncodeSerial(2))
	bt.Put("meta/count", state.EncodeCount(2, 2))
	if err := w.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	w.Close()
	o.ReadOnly = true
	reader, err := etcdstate.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if rs, err := reader.List(); err != nil || len(rs) != 2 || rs[1].ID != "3" {
		t.Errorf("the earlier reconcile lists %+v, %v", rs, err)
	}
}
