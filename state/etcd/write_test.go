package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/reconcile-dev/reconcile/state/etcd"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// fault is what a faulty connection does with a write.
type fault int

const (
	pass    fault = iota // sends it and returns the answer
	lost                 // sends it, and loses the answer
	unsent               // fails before sending it
	refused              // returns etcd's refusal, unsent
)

// faults is a connection that fails the writes of records (transactions
// that put a key under records/) as a script says.
type faults struct {
	mu     sync.Mutex
	script []fault // for the next writes, in order
	then   fault   // for writes past the script
	seen   int     // writes seen
	failed int     // writes that failed on their own
}

func (f *faults) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	txn, ok := req.(*pb.TxnRequest)
	if !ok || !putsRecord(txn) {
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	f.mu.Lock()
	do := f.then
	if f.seen < len(f.script) {
		do = f.script[f.seen]
	}
	f.seen++
	f.mu.Unlock()
	switch do {
	case lost:
		if err := invoke(ctx, method, req, reply, cc, opts...); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "test: the answer was lost")
	case unsent:
		return status.Error(codes.Unavailable, "test: the connection broke")
	case refused:
		return status.Error(codes.PermissionDenied, "etcdserver: permission denied")
	}
	err := invoke(ctx, method, req, reply, cc, opts...)
	if err != nil {
		f.mu.Lock()
		f.failed++
		f.mu.Unlock()
	}
	return err
}

func putsRecord(txn *pb.TxnRequest) bool {
	for _, op := range txn.Success {
		if put := op.GetRequestPut(); put != nil && strings.Contains(string(put.Key), "/records/") {
			return true
		}
	}
	return false
}

// TestAmbiguousWrites: a write whose answer is lost is tried again, and
// the Marker tells whether the lost attempt was made; without a Marker,
// or when the deadline passes, the outcome is unknown; a refusal is not
// tried again, and is no unknown outcome.
func TestAmbiguousWrites(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	for name, tc := range map[string]struct {
		script   []fault
		then     fault
		marker   bool
		stored   string        // meta/serial before the write
		deadline time.Duration // of the write's context
		want     error         // nil: made once
		made     bool          // whether the record is written, once
	}{
		"answer lost, marker shows it made":       {script: []fault{lost}, marker: true, made: true},
		"answer lost twice, marker shows it made": {script: []fault{lost, lost}, marker: true, made: true},
		"unsent, then made":                       {script: []fault{unsent, unsent}, marker: true, made: true},
		"unsent, without a marker":                {script: []fault{unsent}, made: true},
		"answer lost, without a marker":           {script: []fault{lost}, want: kv.ErrUnknownOutcome, made: true},
		"answer lost, then no answer until the deadline": {script: []fault{lost}, then: unsent, marker: true, deadline: 2 * time.Second,
			want: kv.ErrUnknownOutcome, made: true},
		"unsent, and the condition fails": {script: []fault{unsent}, marker: true, stored: "other", want: kv.ErrConflict},
		"refused":                         {script: []fault{refused}, marker: true, want: errors.ErrUnsupported},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := &faults{script: tc.script, then: tc.then}
			o := etcd.WithDialOptions(etcd.Options{Endpoints: endpoints, Prefix: newPrefix()}, grpc.WithChainUnaryInterceptor(f.intercept))
			s := open(t, newBackend(t, o), "prod", kv.Options{Write: true, Init: meta})
			if tc.stored != "" {
				if err := s.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "meta/serial", Value: []byte(tc.stored)}}}); err != nil {
					t.Fatal(err)
				}
			}
			bt := &kv.Batch{}
			bt.Expect("meta/serial", []byte("0"))
			bt.Put("meta/serial", []byte("1"))
			bt.Put("records/a", []byte("a"))
			if tc.marker {
				bt.Marker = "meta/serial"
			}
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			err := s.Write(ctx, bt)
			switch {
			case tc.want == nil && err != nil:
				t.Errorf("Write = %v, want it made", err)
			case tc.want == errors.ErrUnsupported:
				if err == nil || errors.Is(err, kv.ErrUnknownOutcome) || f.seen != 1 {
					t.Errorf("Write refused = %v after %d attempts, want the refusal, once, and no unknown outcome", err, f.seen)
				}
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Write = %v, want an error matching %v", err, tc.want)
			}
			resp, err := cli.Get(t.Context(), o.Prefix+"/prod/records/a")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !tc.made && len(resp.Kvs) != 0:
				t.Errorf("the record was written")
			case tc.made && (len(resp.Kvs) != 1 || resp.Kvs[0].Version != 1):
				t.Errorf("the record was not written once: %v", resp.Kvs)
			}
		})
	}
}

// TestLeaderLoss: on a cluster of three, the leader stops while a writer
// writes a chain of writes, each conditional on the one before; every
// write is made once, none is lost or doubled, and the lock holds.
func TestLeaderLoss(t *testing.T) {
	t.Parallel()
	members := etcdtest.StartCluster(t, 3)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.Endpoint)
	}
	f := &faults{}
	b := newBackend(t, etcd.WithDialOptions(etcd.Options{Endpoints: endpoints, RequestTimeout: time.Minute}, grpc.WithChainUnaryInterceptor(f.intercept)))
	s := open(t, b, "prod", kv.Options{Write: true, Init: []kv.Op{{Key: "meta/format", Value: []byte("f")}, {Key: "meta/serial", Value: []byte("0")}}})
	const n = 40
	tenth := make(chan struct{})
	acked := map[int]bool{}
	serial, stopped := 0, false
	for serial < n {
		bt := &kv.Batch{Marker: "meta/serial"}
		bt.Expect("meta/serial", []byte(fmt.Sprint(serial)))
		bt.Put("meta/serial", []byte(fmt.Sprint(serial+1)))
		bt.Put(fmt.Sprintf("records/r%02d", serial+1), []byte(fmt.Sprint(serial+1)))
		err := s.Write(t.Context(), bt)
		switch {
		case err == nil:
			serial++
			acked[serial] = true
		case errors.Is(err, kv.ErrUnknownOutcome):
			// As the model does: read what is stored before going on.
			t.Logf("write %d: %v", serial+1, err)
			v := get(t, s, "meta/serial")
			if _, err := fmt.Sscan(string(v), &serial); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("write %d: %v", serial+1, err)
		}
		if serial >= 10 && !stopped {
			stopped = true
			close(tenth)
			go func() {
				for _, m := range members {
					if m.IsLeader() {
						m.Stop()
						return
					}
				}
				t.Error("no leader")
			}()
		}
	}
	<-tenth
	f.mu.Lock()
	t.Logf("%d attempts of %d writes failed and were tried again", f.failed, f.seen)
	f.mu.Unlock()
	if err := s.Held(); err != nil {
		t.Errorf("Held after the leader was lost: %v", err)
	}
	// What a new reader sees: every write once, in order.
	r := open(t, b, "prod", kv.Options{})
	var got []string
	if err := r.Read(t.Context(), func(v kv.View) error {
		return v.Scan("records/", "", false, func(k string, v []byte) error { got = append(got, k+"="+string(v)); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != n || string(get(t, r, "meta/serial")) != fmt.Sprint(n) {
		t.Errorf("after %d writes (%d acknowledged) the stack holds serial %s and %d records: %q", n, len(acked), get(t, r, "meta/serial"), len(got), got)
	}
	for i, kv := range got {
		if want := fmt.Sprintf("records/r%02d=%d", i+1, i+1); kv != want {
			t.Errorf("record %d = %q, want %q", i, kv, want)
		}
	}
}

// TestFrozenHolder: a writer that stops renewing its lease (a process
// stopped, or cut off) past its TTL, and that has not seen its lock go,
// writes nothing once the lease lapsed or another took the lock over: the
// transaction's own condition refuses it, then Held says so too.
func TestFrozenHolder(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	for name, lapse := range map[string]func(t *testing.T, key string){
		// The server deletes the lock key when the lease expires.
		"lease expired": func(t *testing.T, key string) { waitDeleted(t, cli, key) },
		// By hand: the create revision stays, the lease changes.
		"lock key overwritten": func(t *testing.T, key string) {
			lease, err := cli.Grant(t.Context(), 3600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cli.Put(t.Context(), key, "other", clientv3.WithLease(lease.ID)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := newPrefix()
			b := newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: prefix})
			w := open(t, b, "prod", kv.Options{Write: true, Init: meta, LockTTL: 2 * time.Second})
			if err := w.Held(); err != nil {
				t.Fatalf("Held of a new writer: %v", err)
			}
			etcd.StopBackground(w)
			lapse(t, prefix+"/prod/lock")
			select {
			case <-w.Lost():
				t.Fatal("Lost closed with the keep-alive and the watch stopped")
			default:
			}
			err := w.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("stale")}}})
			if !errors.Is(err, kv.ErrLeaseLost) {
				t.Errorf("Write of the frozen holder = %v, want ErrLeaseLost", err)
			}
			select {
			case <-w.Lost():
			default:
				t.Errorf("Lost not closed once a write found the lock lost")
			}
			if err := w.Held(); !errors.Is(err, kv.ErrLeaseLost) {
				t.Errorf("Held of the frozen holder = %v, want ErrLeaseLost", err)
			}
			if v := get(t, open(t, b, "prod", kv.Options{}), "records/a"); v != nil {
				t.Errorf("the frozen holder wrote %q", v)
			}
		})
	}
}

// TestHeldByRenewal: Held fails once the last renewal is older than the
// TTL, though nothing told the writer its lease is gone: what a process
// that wakes from a long stop sees.
func TestHeldByRenewal(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	prefix := newPrefix()
	w := open(t, newBackend(t, etcd.Options{Endpoints: endpoints, Prefix: prefix}), "prod", kv.Options{Write: true, Init: meta, LockTTL: 2 * time.Second})
	etcd.StopBackground(w)
	// The server deletes the lock key when the lease, no longer renewed,
	// expires: by then its earliest end as the writer reckons it has
	// passed.
	waitDeleted(t, cli, prefix+"/prod/lock")
	if err := w.Held(); !errors.Is(err, kv.ErrLeaseLost) || !strings.Contains(err.Error(), "last renewed too long ago") {
		t.Errorf("Held after the lease expired unrenewed = %v, want ErrLeaseLost", err)
	}
}

// waitDeleted waits for the deletion of key, which exists.
func waitDeleted(t *testing.T, cli *clientv3.Client, key string) {
	t.Helper()
	got, err := cli.Get(t.Context(), key)
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("read %s: %v", key, err)
	}
	for resp := range cli.Watch(t.Context(), key, clientv3.WithRev(got.Kvs[0].ModRevision+1), clientv3.WithFilterPut()) {
		if len(resp.Events) > 0 {
			return
		}
	}
	t.Fatalf("watch of %s ended", key)
}
