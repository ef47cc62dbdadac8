package etcdstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// wantLocked checks that err is a *state.LockedError for o's location and
// returns it.
func wantLocked(t *testing.T, what string, err error, o etcdstate.Options) *state.LockedError {
	t.Helper()
	var le *state.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("%s = %v, want a *state.LockedError", what, err)
	}
	if le.Path != o.String() {
		t.Errorf("%s: LockedError.Path = %q, want %q", what, le.Path, o.String())
	}
	return le
}

// TestLockHolderNamed runs alone: it sets the environment of a GitHub
// Actions job.
func TestLockHolderNamed(t *testing.T) {
	t.Setenv("GITHUB_SERVER_URL", "https://github.com")
	t.Setenv("GITHUB_REPOSITORY", "acme/infra")
	t.Setenv("GITHUB_RUN_ID", "42")
	const job = "https://github.com/acme/infra/actions/runs/42"
	o := newStack(etcdtest.Start(t))
	o.Create, o.Command = true, "reconcile apply"
	first := mustOpen(t, o)
	host, _ := os.Hostname()

	for name, timeout := range map[string]time.Duration{"no wait": 0, "short wait": 300 * time.Millisecond} {
		second := o
		second.Command, second.LockTimeout = "reconcile destroy", timeout
		_, err := etcdstate.Open(t.Context(), second)
		le := wantLocked(t, name+": a second writer", err, o)
		h := le.Holder
		if h.PID != os.Getpid() || h.Host != host || h.Command != "reconcile apply" || h.Job != job || time.Since(h.Since) > time.Hour {
			t.Errorf("%s: LockedError.Holder = %+v, want pid %d on %s running %q in job %s, since about now", name, h, os.Getpid(), host, "reconcile apply", job)
		}
		for _, want := range []string{fmt.Sprint(os.Getpid()), host, `"reconcile apply"`, job, o.String()} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not name %s", name, err, want)
			}
		}
	}

	// Readers take no lock.
	r := o
	r.ReadOnly = true
	mustOpen(t, r)

	// A writer with a long timeout gets the lock once the first closes.
	got := make(chan error, 1)
	go func() {
		second := o
		second.LockTimeout = time.Hour
		s, err := etcdstate.Open(context.Background(), second)
		if err == nil {
			_, err = s.Put(state.Record{Name: "second"})
			s.Close()
		}
		got <- err
	}()
	if _, err := first.Put(state.Record{Name: "first"}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("a writer waiting for the lock, after the holder closed = %v, want the lock", err)
	}
	r.ReadOnly = false
	s := mustOpen(t, r)
	if m, _ := s.Meta(); m.Serial != 2 {
		t.Errorf("serial after both writers = %d, want 2", m.Serial)
	}
}

// holdDead puts o's lock key as a holder that died would have left it:
// attached to a lease of ttl seconds that no one keeps alive. It returns
// the lease.
func holdDead(t *testing.T, cli *clientv3.Client, o etcdstate.Options, ttl int64) clientv3.LeaseID {
	t.Helper()
	lease, err := cli.Grant(t.Context(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	h := state.Holder{PID: 77, Host: "runner-gone", Command: "reconcile apply", Since: time.Now().UTC().Truncate(time.Second)}
	key := o.Prefix + "/" + o.Stack + "/lock"
	if _, err := cli.Put(t.Context(), key, string(state.EncodeHolder(h)), clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	return lease.ID
}

func TestDeadHolderLeaseExpires(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := newStack(endpoints)
	o.Create = true
	mustOpen(t, o).Close()
	holdDead(t, cli, o, 1) // etcd raises it to its minimum TTL

	_, err := etcdstate.Open(t.Context(), o)
	if le := wantLocked(t, "Open beside a dead holder's lock", err, o); le.Holder.PID != 77 || le.Holder.Host != "runner-gone" {
		t.Errorf("LockedError.Holder = %+v, want the dead holder, pid 77 on runner-gone", le.Holder)
	}
	// No force-unlock: the lease expires, and a waiting writer gets the lock.
	o.LockTimeout = time.Hour
	s := mustOpen(t, o)
	if _, err := s.Put(state.Record{Name: "a"}); err != nil {
		t.Errorf("Put after taking over an expired lock = %v", err)
	}
}

func TestRevokedHolderFreesLock(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := newStack(endpoints)
	o.Create = true
	mustOpen(t, o).Close()
	lease := holdDead(t, cli, o, 3600)
	o.LockTimeout = time.Hour
	got := make(chan error, 1)
	go func() {
		s, err := etcdstate.Open(context.Background(), o)
		if err == nil {
			err = s.Close()
		}
		got <- err
	}()
	if _, err := cli.Revoke(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("Open waiting for a lock whose lease was revoked = %v, want the lock", err)
	}
}

func TestCloseFreesLockAtOnce(t *testing.T) {
	t.Parallel()
	o := newStack(etcdtest.Start(t))
	o.Create = true
	for i := range 3 {
		s := mustOpen(t, o) // LockTimeout 0: fails unless the last Close freed it
		if err := s.Close(); err != nil {
			t.Fatalf("Close %d = %v", i, err)
		}
	}
}

func TestFencing(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := newStack(endpoints)
	o.Create, o.Command = true, "reconcile apply"
	first := mustOpen(t, o)
	if _, err := first.Put(state.Record{Name: "shared", ID: "first"}); err != nil {
		t.Fatal(err)
	}

	// The first holder's lease lapses (as if paused past its TTL): revoke
	// it from outside, and let a second writer take the lock and write.
	if _, err := cli.Revoke(t.Context(), clientv3.LeaseID(etcdstate.Lease(first))); err != nil {
		t.Fatal(err)
	}
	<-first.Lost() // the keep-alive or the watch of the lock key sees it
	o.LockTimeout = time.Hour
	second := mustOpen(t, o)
	want, err := second.Put(state.Record{Name: "shared", ID: "second"})
	if err != nil {
		t.Fatal(err)
	}

	// Every write of the first now fails, and writes nothing.
	for op, err := range map[string]error{
		"Put":               func() error { _, err := first.Put(state.Record{Name: "shared", ID: "stale"}); return err }(),
		"PutAndClearIntent": func() error { _, err := first.PutAndClearIntent(state.Record{Name: "x"}); return err }(),
		"Delete":            first.Delete("shared"),
		"PutIntent":         first.PutIntent(state.Intent{Name: "x", Token: "t"}),
		"AddHistory":        first.AddHistory(state.HistoryEntry{Command: "apply"}),
		"Rename":            first.Rename("shared", "moved"),
	} {
		if !errors.Is(err, state.ErrLockLost) || !strings.Contains(err.Error(), "another runner may hold it") {
			t.Errorf("%s by a holder whose lock was taken over = %v, want ErrLockLost", op, err)
		}
	}
	got, ok, err := second.Get("shared")
	if err != nil || !ok || got.ID != "second" || got.Serial != want.Serial {
		t.Errorf("Get(shared) after the stale holder's writes = %+v, %v, %v, want the second holder's %+v", got, ok, err, want)
	}
	if m, _ := second.Meta(); m.Serial != want.Serial {
		t.Errorf("serial after the stale holder's writes = %d, want %d", m.Serial, want.Serial)
	}
	if ins, _ := second.Intents(); len(ins) != 0 {
		t.Errorf("Intents() after the stale holder's writes = %+v, want none", ins)
	}
}

// TestFencedWrite checks the transaction's own condition: a holder that
// has not noticed that its lock was taken over cannot write.
func TestFencedWrite(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	for name, takeOver := range map[string]func(t *testing.T, key, holder string, lease clientv3.LeaseID){
		// As a second holder does once the first's lease expired.
		"deleted, then put again": func(t *testing.T, key, holder string, lease clientv3.LeaseID) {
			if _, err := cli.Delete(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			if _, err := cli.Put(t.Context(), key, holder, clientv3.WithLease(lease)); err != nil {
				t.Fatal(err)
			}
		},
		// By hand: the create revision stays, the lease changes.
		"overwritten": func(t *testing.T, key, holder string, lease clientv3.LeaseID) {
			if _, err := cli.Put(t.Context(), key, holder, clientv3.WithLease(lease)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := newStack(endpoints)
			o.Create = true
			first := mustOpen(t, o)
			// Paused: it sees nothing until it writes.
			etcdstate.StopBackground(first)
			lease, err := cli.Grant(t.Context(), 3600)
			if err != nil {
				t.Fatal(err)
			}
			takeOver(t, etcdstate.LockKey(first), string(state.EncodeHolder(state.Holder{PID: 99, Host: "other"})), lease.ID)
			_, err = first.Put(state.Record{Name: "a"})
			if !errors.Is(err, state.ErrLockLost) {
				t.Fatalf("Put after the lock key was taken over = %v, want ErrLockLost", err)
			}
			select {
			case <-first.Lost():
			default:
				t.Errorf("Lost() not closed after a write failed its lock check")
			}
			r := o
			r.ReadOnly = true
			if m, _ := mustOpen(t, r).Meta(); m.Serial != 0 {
				t.Errorf("serial after a fenced write = %d, want 0", m.Serial)
			}
		})
	}
}

// TestHeldAfterPause: a writer that stops renewing its lease (a process
// stopped with SIGSTOP) knows, on waking, that its lock may be gone, before
// it changes anything in the cloud.
func TestHeldAfterPause(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := newStack(endpoints)
	o.Create = true
	o.LockTTL = 2 * time.Second
	s := mustOpen(t, o)
	if err := s.Held(); err != nil {
		t.Fatalf("Held() of a fresh writer = %v, want nil", err)
	}
	key := etcdstate.LockKey(s)
	got, err := cli.Get(t.Context(), key)
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("read the lock key: %v, %d keys", err, len(got.Kvs))
	}
	watch := cli.Watch(t.Context(), key, clientv3.WithRev(got.Kvs[0].ModRevision+1), clientv3.WithFilterPut())
	etcdstate.StopBackground(s)
	// The server deletes the lock key when the lease expires; by then the
	// lease's earliest end, as the writer reckons it, has passed.
	for resp := range watch {
		if len(resp.Events) > 0 {
			break
		}
	}
	if err := s.Held(); !errors.Is(err, state.ErrLockLost) {
		t.Fatalf("Held() after the lease expired = %v, want ErrLockLost", err)
	}
	select {
	case <-s.Lost():
	default:
		t.Errorf("Lost() not closed once Held() found the lease lapsed")
	}
	r := o
	r.ReadOnly = true
	if err := mustOpen(t, r).Held(); err != nil {
		t.Errorf("Held() of a reader = %v, want nil", err)
	}
}
