package etcd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state/etcd"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/kv/kvtest"
)

var prefixes atomic.Int64

// newPrefix returns a key prefix no other test of the process uses.
func newPrefix() string { return fmt.Sprintf("/reconcile/test-%d", prefixes.Add(1)) }

// newBackend returns a Backend of o, with a new prefix unless o has one,
// closed at the end of t.
func newBackend(t testing.TB, o etcd.Options) *etcd.Backend {
	t.Helper()
	if o.Prefix == "" {
		o.Prefix = newPrefix()
	}
	b, err := etcd.New(t.Context(), o)
	if err != nil {
		t.Fatalf("New(%v): %v", o, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// client returns a client of endpoints, closed at the end of t.
func client(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// open opens stack of b, and closes it at the end of t.
func open(t testing.TB, b kv.Backend, stack string, o kv.Options) kv.Store {
	t.Helper()
	s, err := b.Open(t.Context(), stack, o)
	if err != nil {
		t.Fatalf("Open(%s, %+v): %v", stack, o, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// get reads key of s.
func get(t testing.TB, s kv.Store, key string) []byte {
	t.Helper()
	var v []byte
	if err := s.Read(t.Context(), func(vw kv.View) error {
		var err error
		v, err = vw.Get(key)
		return err
	}); err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

// meta is what the tests' Init puts.
var meta = []kv.Op{{Key: "meta/format", Value: []byte("format")}, {Key: "meta/serial", Value: []byte("0")}}

// lockLease returns the lease of the lock of stack under prefix.
func lockLease(t testing.TB, cli *clientv3.Client, prefix, stack string) clientv3.LeaseID {
	t.Helper()
	resp, err := cli.Get(t.Context(), prefix+"/"+stack+"/lock")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("read the lock of %s: %v, %v", stack, resp, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// prefixed is a Backend that knows its prefix, for Expire.
type prefixed struct {
	*etcd.Backend
	prefix string
}

func TestContract(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	kvtest.Run(t, kvtest.Harness{
		New: func(t *testing.T) kv.Backend {
			p := newPrefix()
			return prefixed{newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: p}), p}
		},
		Expire: func(t *testing.T, b kv.Backend, stack string) {
			if _, err := cli.Revoke(t.Context(), lockLease(t, cli, b.(prefixed).prefix, stack)); err != nil {
				t.Fatalf("revoke the lease of %s: %v", stack, err)
			}
		},
	})
}

// TestLayout: the model's keys are stored as they are under
// PREFIX/STACK/, their values byte for byte, and the lock is
// PREFIX/STACK/lock, holding the holder's bytes on a lease: the layout
// every stack made so far has, so that they read the same.
func TestLayout(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	prefix := newPrefix()
	base := prefix + "/prod/"
	// A stack as an earlier reconcile left it.
	earlier := map[string]string{
		"meta/format": "\x00\x00\x00\x00\x00\x00\x00\x02\x11\x22\x33\x44", "meta/serial": "s", "outputs": "o",
		"records/a": "r", "versions/a\x0000000000000000000001": "v", "history/00000000000000000001/00000000000000000001": "h", "intents/b": "i",
	}
	for k, v := range earlier {
		if _, err := cli.Put(t.Context(), base+k, v); err != nil {
			t.Fatal(err)
		}
	}
	b := newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: prefix + "/"})
	if got, err := b.Stacks(t.Context()); err != nil || len(got) != 1 || got[0] != "prod" {
		t.Errorf("Stacks = %q, %v; want [prod]", got, err)
	}
	holder := []byte("{\"pid\":1}\x00\xff")
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: holder})
	read := map[string]string{}
	if err := w.Read(t.Context(), func(v kv.View) error {
		return v.Scan("", "", false, func(k string, v []byte) error { read[k] = string(v); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(read) != fmt.Sprint(earlier) {
		t.Errorf("the stack reads as\n%q\nwant what is stored (and not its lock)\n%q", read, earlier)
	}
	value := []byte{0, 1, 2, 0xfe, 0xff}
	bt := &kv.Batch{Marker: "records/é b"}
	bt.Put("records/é b", value)
	bt.Delete("intents/b")
	if err := w.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(t.Context(), base, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][]byte{}
	for _, kv := range resp.Kvs {
		stored[string(kv.Key)] = kv.Value
		if string(kv.Key) == base+"lock" && kv.Lease == 0 {
			t.Errorf("the lock key has no lease")
		}
	}
	if !bytes.Equal(stored[base+"records/é b"], value) || !bytes.Equal(stored[base+"lock"], holder) || stored[base+"intents/b"] != nil ||
		string(stored[base+"meta/format"]) != earlier["meta/format"] {
		t.Errorf("stored under %s: %q", base, stored)
	}
	// Describe names the stack without credentials.
	if want := "etcd://" + endpoints[0] + prefix + " (stack prod)"; w.Describe() != want {
		t.Errorf("Describe = %q, want %q", w.Describe(), want)
	}
}

// TestLimits: a record's write at the limits (two values of Limits.Value,
// keys with names of 1 KiB, the serial, the count, an intent's delete and
// a condition) is within Limits.Bytes and etcd's default
// --max-request-bytes takes it, with a short key prefix and a long one;
// Value is 764 KiB with etcd's defaults, as the record limit always was.
func TestLimits(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	for _, prefix := range []string{"/r", "/reconcile/" + strings.Repeat("long-prefix-", 20)} {
		b := newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: prefix})
		s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
		l := s.Limits()
		if prefix == "/r" && (l.Value != (1536<<10-8192)/2 || l.Ops != 126) {
			t.Errorf("Limits = %+v, want Value %d and Ops 126", l, (1536<<10-8192)/2)
		}
		if !strings.Contains(l.Why, "1.5 MiB (its --max-request-bytes)") {
			t.Errorf("Limits.Why = %q", l.Why)
		}
		name := strings.Repeat("n", 1024)
		bt := &kv.Batch{Marker: "meta/serial"}
		bt.Expect("meta/serial", []byte("0"))
		bt.Put("records/"+name, bytes.Repeat([]byte("r"), l.Value))
		bt.Put("versions/"+name+"\x0000000000000000000001", bytes.Repeat([]byte("v"), l.Value))
		bt.Delete("intents/" + name)
		bt.Put("meta/serial", []byte("00000000000000000001-with-its-check"))
		bt.Put("meta/count", []byte("0000000000000001-0000000000000001-with-its-check"))
		if bt.Size() > l.Bytes {
			t.Errorf("prefix of %d bytes: a record's write at Limits.Value is %d bytes, more than Limits.Bytes %d", len(prefix), bt.Size(), l.Bytes)
		}
		if err := s.Write(t.Context(), bt); err != nil {
			t.Errorf("prefix of %d bytes: a record's write at Limits.Value (%d bytes): %v", len(prefix), l.Value, err)
		}
	}
}

// TestServerLimitsLower: a server whose limits are below the client's
// refuses a write whole, and the error matches kv.ErrTooLarge and says
// what to raise; the Store goes on working.
func TestServerLimitsLower(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t) // etcd's defaults: 1.5 MiB, 128 operations
	b := newBackend(t, etcd.Options{Endpoints: endpoints, MaxRequestBytes: 4 << 20, MaxTxnOps: 1000})
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	big := &kv.Batch{}
	big.Put("records/big", bytes.Repeat([]byte("x"), 1700<<10))
	many := &kv.Batch{}
	for i := range 200 {
		many.Put(fmt.Sprintf("records/r%03d", i), []byte("v"))
	}
	for name, bt := range map[string]*kv.Batch{"1.7 MiB": big, "200 operations": many} {
		err := s.Write(t.Context(), bt)
		if !errors.Is(err, kv.ErrTooLarge) || errors.Is(err, kv.ErrUnknownOutcome) || !strings.Contains(err.Error(), "--max-request-bytes") {
			t.Errorf("%s: Write = %v, want an error matching ErrTooLarge that says what to raise", name, err)
		}
	}
	if v := get(t, s, "records/big"); v != nil {
		t.Errorf("a refused write was made")
	}
	if err := s.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/small", Value: []byte("v")}}}); err != nil {
		t.Errorf("a write after refused ones: %v", err)
	}
}

// TestScanSkipsLock: a writer's views never list the lock key, which is
// no key of the model's.
func TestScanSkipsLock(t *testing.T) {
	t.Parallel()
	b := newBackend(t, etcd.Options{Endpoints: etcdtest.Start(t)})
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	var keys []string
	if err := s.Read(t.Context(), func(v kv.View) error {
		return v.Scan("", "", true, func(k string, _ []byte) error { keys = append(keys, k); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[meta/format meta/serial]" {
		t.Errorf("a writer's Scan of everything = %q", keys)
	}
}

// TestRemoveWaitsForLock: Remove takes the stack's lock first, and so
// removes nothing while a writer holds it.
func TestRemoveWaitsForLock(t *testing.T) {
	t.Parallel()
	b := newBackend(t, etcd.Options{Endpoints: etcdtest.Start(t)})
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: []byte("apply")})
	var locked *kv.LockedError
	if err := b.Remove(t.Context(), "prod", 0); !errors.As(err, &locked) || string(locked.Holder) != "apply" {
		t.Fatalf("Remove beside a writer = %v, want a *kv.LockedError naming it", err)
	}
	if v := get(t, w, "meta/format"); v == nil {
		t.Fatalf("Remove refused removed meta/format")
	}
	done := make(chan error, 1)
	go func() { done <- b.Remove(context.Background(), "prod", time.Minute) }()
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("Remove once the writer closed: %v", err)
	}
	if got, err := b.Stacks(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("Stacks after Remove = %q, %v", got, err)
	}
}

// TestSnapshotCompacted: a reader whose snapshot etcd compacted away fails
// its reads, saying to run again.
func TestSnapshotCompacted(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	b := newBackend(t, etcd.Options{Endpoints: endpoints})
	open(t, b, "prod", kv.Options{Write: true, Init: meta}).Close()
	r := open(t, b, "prod", kv.Options{})
	resp, err := cli.Put(t.Context(), "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	err = r.Read(t.Context(), func(v kv.View) error { _, err := v.Get("meta/format"); return err })
	if err == nil || !strings.Contains(err.Error(), "compacted away") || !strings.Contains(err.Error(), "run again") {
		t.Errorf("a read of a compacted snapshot = %v, want an error saying to run again", err)
	}
}

// TestGetManySnapshot: GetMany reads more keys than one transaction holds,
// all at a reader's snapshot.
func TestGetManySnapshot(t *testing.T) {
	t.Parallel()
	b := newBackend(t, etcd.Options{Endpoints: etcdtest.Start(t), MaxTxnOps: 16})
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("records/r%02d", i))
		if err := w.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: keys[i], Value: []byte("old")}}}); err != nil {
			t.Fatal(err)
		}
	}
	keys = append(keys, "records/none")
	r := open(t, b, "prod", kv.Options{})
	bt := &kv.Batch{}
	for _, k := range keys[:10] {
		bt.Put(k, []byte("new"))
	}
	if err := w.Write(t.Context(), bt); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]kv.Store{"reader": r, "writer": w} {
		var got [][]byte
		if err := s.Read(t.Context(), func(v kv.View) error {
			var err error
			got, err = v.GetMany(keys)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		want := "old"
		if name == "writer" {
			want = "new"
		}
		if len(got) != len(keys) || string(got[0]) != want || string(got[9]) != want || string(got[39]) != "old" || got[40] != nil {
			t.Errorf("the %s's GetMany = %q", name, got)
		}
	}
}

// TestStacksAmongOtherKeys: Stacks lists the stacks, those with
// meta/format, and nothing else under the prefix or beside it.
func TestStacksAmongOtherKeys(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	prefix := newPrefix()
	for _, k := range []string{"/b/meta/format", "/b-x/meta/format", "/b0/meta/format", "/loose", "/junk/records/a", "/only-lock/lock", "ing/other/meta/format"} {
		if _, err := cli.Put(t.Context(), prefix+k, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: prefix}).Stacks(t.Context()); err != nil || fmt.Sprint(got) != "[b b-x b0]" {
		t.Errorf("Stacks = %q, %v; want [b b-x b0]", got, err)
	}
}

// TestDeadHolder: a holder that died (it renews its lease no more) keeps
// the lock until the lease expires, and no longer: a writer waiting for it
// then takes it, and no one had to force it.
func TestDeadHolder(t *testing.T) {
	t.Parallel()
	b := newBackend(t, etcd.Options{Endpoints: etcdtest.Start(t)})
	dead := open(t, b, "prod", kv.Options{Write: true, Init: meta, LockTTL: 2 * time.Second, Holder: []byte("dead")})
	etcd.StopBackground(dead)
	var waitedFor []byte
	s := open(t, b, "prod", kv.Options{Write: true, LockTimeout: time.Minute, OnWait: func(h []byte) { waitedFor = h }})
	if string(waitedFor) != "dead" {
		t.Errorf("the writer waited for %q, want the dead holder", waitedFor)
	}
	if err := s.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("a")}}}); err != nil {
		t.Errorf("Write once the dead holder's lease expired: %v", err)
	}
}
