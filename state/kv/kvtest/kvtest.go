// Package kvtest is the contract every kv backend passes: run it from the
// backend's own tests with Run, against a real server (or file) that the
// test starts.
package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Harness gives the contract a backend to test.
type Harness struct {
	// New returns a new, empty Backend, closed when t ends: every call a
	// backend of its own (another directory, key prefix, database schema).
	New func(t *testing.T) kv.Backend
	// Expire, when set, makes the lease of the writer holding stack's lock
	// lapse now, as the server sees it (a lease revoked, a lock row's
	// expiry moved to the past), as it does when its holder stops renewing
	// it. Backends whose lock is not a lease leave it nil.
	Expire func(t *testing.T, b kv.Backend, stack string)
}

// Run runs the contract.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"Missing", testMissing},
		{"Init", testInit},
		{"InitRace", testInitRace},
		{"PutGetDelete", testPutGetDelete},
		{"ScanOrder", testScanOrder},
		{"Conditions", testConditions},
		{"ReadOnly", testReadOnly},
		{"Snapshot", testSnapshot},
		{"Lock", testLock},
		{"LeaseLost", testLeaseLost},
		{"Limits", testLimits},
		{"Stacks", testStacks},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

// meta is what a model's Init holds at least.
var meta = []kv.Op{{Key: "meta/format", Value: []byte("format-2")}, {Key: "meta/serial", Value: []byte("serial-0")}}

func open(t *testing.T, b kv.Backend, stack string, opts kv.Options) kv.Store {
	t.Helper()
	if opts.LockTTL == 0 {
		opts.LockTTL = 5 * time.Second
	}
	s, err := b.Open(t.Context(), stack, opts)
	if err != nil {
		t.Fatalf("Open(%s, write %v): %v", stack, opts.Write, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, s kv.Store, key string) []byte {
	t.Helper()
	var v []byte
	err := s.Read(t.Context(), func(vw kv.View) error {
		var err error
		v, err = vw.Get(key)
		return err
	})
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

func write(t *testing.T, s kv.Store, b *kv.Batch) {
	t.Helper()
	if err := s.Write(t.Context(), b); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func scan(t *testing.T, s kv.Store, prefix, after string) []string {
	t.Helper()
	var out []string
	err := s.Read(t.Context(), func(vw kv.View) error {
		return vw.Scan(prefix, after, false, func(key string, value []byte) error {
			out = append(out, key+"="+string(value))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("Scan(%q, %q): %v", prefix, after, err)
	}
	return out
}

// testMissing: a stack that does not exist is empty on a shared backend,
// and ErrNotFound on a local one, when opened without Init.
func testMissing(t *testing.T, h Harness) {
	b := h.New(t)
	s, err := b.Open(t.Context(), "prod", kv.Options{})
	if !b.Shared() {
		if !errors.Is(err, kv.ErrNotFound) {
			t.Fatalf("Open of a missing local stack = %v, want ErrNotFound", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := get(t, s, "meta/format"); v != nil {
		t.Errorf("a missing stack holds meta/format %q", v)
	}
	if got, err := b.Stacks(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("Stacks = %v, %v; want none: opening a stack makes none", got, err)
	}
}

// testInit: Init creates the stack with its keys; a second Init leaves it
// as it is.
func testInit(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	if v := get(t, s, "meta/serial"); string(v) != "serial-0" {
		t.Fatalf("meta/serial = %q after Init", v)
	}
	write(t, s, &kv.Batch{Ops: []kv.Op{{Key: "meta/serial", Value: []byte("serial-1")}}})
	s.Close()
	s = open(t, b, "prod", kv.Options{Write: true, Init: []kv.Op{{Key: "meta/format", Value: []byte("x")}, {Key: "meta/serial", Value: []byte("serial-0")}}})
	if v := get(t, s, "meta/serial"); string(v) != "serial-1" {
		t.Errorf("meta/serial = %q after a second Init, want the stack left as it was", v)
	}
	if v := get(t, s, "meta/format"); string(v) != "format-2" {
		t.Errorf("meta/format = %q after a second Init", v)
	}
}

// testInitRace: stacks opened with Init by many at once are made once,
// and no opener sees one half made.
func testInitRace(t *testing.T, h Harness) {
	b := h.New(t)
	ops := []kv.Op{{Key: "meta/format", Value: []byte("f")}}
	for i := range 20 {
		ops = append(ops, kv.Op{Key: fmt.Sprintf("records/r%02d", i), Value: []byte("v")})
	}
	for round := range 3 {
		stack := fmt.Sprintf("new%d", round)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := b.Open(t.Context(), stack, kv.Options{Write: i%2 == 0, Init: ops, LockTimeout: time.Minute, LockTTL: 5 * time.Second})
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				var n int
				err = s.Read(t.Context(), func(vw kv.View) error {
					return vw.Scan("records/", "", true, func(string, []byte) error { n++; return nil })
				})
				if err == nil && n != 20 {
					err = fmt.Errorf("an opener saw %d records of 20", n)
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

// testPutGetDelete: a batch's puts and deletes, read back; GetMany.
func testPutGetDelete(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	var bt kv.Batch
	bt.Put("records/a", []byte("1"))
	bt.Put("records/b", []byte{0, 1, 2, 0xff})
	bt.Put("intents/a", []byte("i"))
	write(t, s, &bt)
	if v := get(t, s, "records/b"); !bytes.Equal(v, []byte{0, 1, 2, 0xff}) {
		t.Errorf("records/b = %x, want the bytes put", v)
	}
	bt = kv.Batch{}
	bt.Delete("intents/a")
	bt.Put("records/a", []byte("2"))
	bt.Delete("records/missing")
	write(t, s, &bt)
	var got [][]byte
	err := s.Read(t.Context(), func(vw kv.View) error {
		var err error
		got, err = vw.GetMany([]string{"records/a", "intents/a", "records/b", "records/zz"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || string(got[0]) != "2" || got[1] != nil || got[2] == nil || got[3] != nil {
		t.Errorf("GetMany = %q", got)
	}
}

// testScanOrder: Scan lists a prefix in byte order, from after, with or
// without values, and nothing outside the prefix.
func testScanOrder(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	keys := []string{
		"versions/a\x0000000000000000000002", "versions/a\x0000000000000000000010", "versions/a\x0000000000000000000001",
		"versions/a b\x0000000000000000000001", "versions/ab\x0000000000000000000001", "versions/a/b\x0000000000000000000003",
		"records/a", "records/a/b", "records/é", "records/A", "recordsX", "history/00000000000000000002/00000000000000000001",
		"history/00000000000000000010/00000000000000000002", "outputs",
	}
	var bt kv.Batch
	for _, k := range keys {
		bt.Put(k, []byte(k))
	}
	write(t, s, &bt)
	want := func(prefix, after string) []string {
		var in []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) && k > after {
				in = append(in, k)
			}
		}
		slices.Sort(in) // the keys' order, not that of "key=value"
		var out []string
		for _, k := range in {
			out = append(out, k+"="+k)
		}
		return out
	}
	for _, c := range []struct{ prefix, after string }{
		{"versions/a\x00", ""}, {"versions/", ""}, {"records/", ""}, {"records/", "records/A"}, {"history/", ""},
		{"versions/a\x00", "versions/a\x0000000000000000000002"}, {"nothing/", ""},
	} {
		if got := scan(t, s, c.prefix, c.after); !slices.Equal(got, want(c.prefix, c.after)) {
			t.Errorf("Scan(%q, %q) = %q, want %q", c.prefix, c.after, got, want(c.prefix, c.after))
		}
	}
	var keysOnly []string
	err := s.Read(t.Context(), func(vw kv.View) error {
		return vw.Scan("records/", "", true, func(k string, v []byte) error {
			if v != nil {
				return fmt.Errorf("keysOnly gave %q a value", k)
			}
			keysOnly = append(keysOnly, k)
			return nil
		})
	})
	if err != nil || len(keysOnly) != 4 {
		t.Errorf("Scan keys only: %q, %v", keysOnly, err)
	}
	stop := errors.New("stop")
	n := 0
	err = s.Read(t.Context(), func(vw kv.View) error {
		return vw.Scan("", "", true, func(string, []byte) error {
			if n++; n == 2 {
				return stop
			}
			return nil
		})
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("Scan stopped by its function: %v after %d keys", err, n)
	}
}

// testConditions: a batch is written only when its conditions hold, whole
// or not at all.
func testConditions(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	bt := &kv.Batch{}
	bt.Expect("meta/serial", []byte("serial-0"))
	bt.Expect("records/a", nil)
	bt.Put("meta/serial", []byte("serial-1"))
	bt.Put("records/a", []byte("1"))
	bt.Marker = "meta/serial"
	write(t, s, bt)
	for _, c := range []struct {
		name string
		cond kv.Cond
	}{
		{"value differs", kv.Cond{Key: "meta/serial", Value: []byte("serial-0")}},
		{"present, not absent", kv.Cond{Key: "records/a", Value: nil}},
		{"absent, not present", kv.Cond{Key: "records/b", Value: []byte("1")}},
	} {
		bt := &kv.Batch{Conds: []kv.Cond{{Key: "meta/serial", Value: []byte("serial-1")}, c.cond}}
		bt.Put("records/c", []byte("c"))
		bt.Delete("records/a")
		err := s.Write(t.Context(), bt)
		if !errors.Is(err, kv.ErrConflict) {
			t.Errorf("%s: Write = %v, want ErrConflict", c.name, err)
		}
		if get(t, s, "records/c") != nil || get(t, s, "records/a") == nil {
			t.Errorf("%s: the refused batch was written in part", c.name)
		}
	}
}

// testReadOnly: a Store opened for reading refuses writes and holds no
// lock.
func testReadOnly(t *testing.T, h Harness) {
	b := h.New(t)
	open(t, b, "prod", kv.Options{Write: true, Init: meta}).Close()
	r := open(t, b, "prod", kv.Options{})
	err := r.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("1")}}})
	if !errors.Is(err, kv.ErrReadOnly) {
		t.Errorf("Write of a reader = %v, want ErrReadOnly", err)
	}
	if err := r.Held(); err != nil {
		t.Errorf("Held of a reader = %v, want nil", err)
	}
	select {
	case <-r.Lost():
		t.Errorf("a reader's Lost is closed")
	default:
	}
	// Readers never exclude each other.
	open(t, b, "prod", kv.Options{LockTimeout: 0})
}

// testSnapshot: a reader's views are of one state while it is open: a
// writer either waits for it (a local file's shared lock) or writes
// without the reader seeing it.
func testSnapshot(t *testing.T, h Harness) {
	b := h.New(t)
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	write(t, w, &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("1")}}})
	w.Close()
	r := open(t, b, "prod", kv.Options{})
	before := scan(t, r, "", "")
	w2, err := b.Open(t.Context(), "prod", kv.Options{Write: true, LockTimeout: 0, LockTTL: 5 * time.Second})
	var locked *kv.LockedError
	switch {
	case errors.As(err, &locked):
		if b.Shared() {
			t.Errorf("a reader kept a writer out of a shared backend: %v", err)
		}
	case err != nil:
		t.Fatal(err)
	default:
		defer w2.Close()
		write(t, w2, &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("2")}, {Key: "records/b", Value: []byte("3")}}})
	}
	if after := scan(t, r, "", ""); !slices.Equal(before, after) {
		t.Errorf("a reader's view changed while it was open:\nbefore %q\nafter  %q", before, after)
	}
}

// testLock: one writer at a time; the next waits up to its timeout,
// saying whom for, and gets the lock once the first closes.
func testLock(t *testing.T, h Harness) {
	b := h.New(t)
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta, Holder: []byte("first")})
	if err := w.Held(); err != nil {
		t.Fatalf("Held = %v", err)
	}
	var waitedFor []byte
	_, err := b.Open(t.Context(), "prod", kv.Options{Write: true, LockTimeout: 200 * time.Millisecond, LockTTL: 5 * time.Second, Holder: []byte("second"),
		OnWait: func(h []byte) { waitedFor = h }})
	var locked *kv.LockedError
	if !errors.As(err, &locked) || string(locked.Holder) != "first" {
		t.Fatalf("a second writer: %v, want a *LockedError naming the first", err)
	}
	if string(waitedFor) != "first" {
		t.Errorf("OnWait got %q, want the first holder", waitedFor)
	}
	// Another stack is not locked.
	open(t, b, "other", kv.Options{Write: true, Init: meta, LockTimeout: 0})
	got := make(chan error, 1)
	go func() {
		s, err := b.Open(context.Background(), "prod", kv.Options{Write: true, LockTimeout: time.Minute, LockTTL: 5 * time.Second, Holder: []byte("third")})
		if err == nil {
			err = s.Write(context.Background(), &kv.Batch{Ops: []kv.Op{{Key: "records/third", Value: []byte("3")}}})
			s.Close()
		}
		got <- err
	}()
	w.Close()
	if err := <-got; err != nil {
		t.Errorf("the writer waiting for the lock: %v", err)
	}
}

// testLeaseLost: a writer whose lease lapsed knows it, writes nothing
// more, and another takes the lock; a local file's lock is never lost.
func testLeaseLost(t *testing.T, h Harness) {
	b := h.New(t)
	if h.Expire == nil {
		if b.Shared() {
			t.Fatal("a shared backend's harness must say how to expire a lease")
		}
		return
	}
	w := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	h.Expire(t, b, "prod")
	select {
	case <-w.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("Lost was not closed once the lease lapsed")
	}
	if err := w.Held(); !errors.Is(err, kv.ErrLeaseLost) {
		t.Errorf("Held = %v, want ErrLeaseLost", err)
	}
	next := open(t, b, "prod", kv.Options{Write: true, LockTimeout: time.Minute})
	write(t, next, &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("next")}}})
	err := w.Write(t.Context(), &kv.Batch{Ops: []kv.Op{{Key: "records/a", Value: []byte("stale")}}})
	if !errors.Is(err, kv.ErrLeaseLost) {
		t.Errorf("the stale writer's Write = %v, want ErrLeaseLost", err)
	}
	if v := get(t, next, "records/a"); string(v) != "next" {
		t.Errorf("records/a = %q: the stale writer wrote", v)
	}
}

// testLimits: a batch, or a value, beyond the backend's limits is refused
// whole.
func testLimits(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	l := s.Limits()
	if l.Value <= 0 || l.Why == "" {
		t.Fatalf("Limits = %+v: a backend says its largest value, and why", l)
	}
	if l.Value < 64<<20 {
		bt := &kv.Batch{}
		bt.Put("records/big", make([]byte, l.Value+1))
		if err := s.Write(t.Context(), bt); !errors.Is(err, kv.ErrTooLarge) {
			t.Errorf("a value past Limits.Value: %v, want ErrTooLarge", err)
		}
	}
	if l.Ops > 0 && l.Ops < 100000 {
		bt := &kv.Batch{}
		for i := range l.Ops + 1 {
			bt.Put(fmt.Sprintf("records/r%06d", i), []byte("v"))
		}
		if err := s.Write(t.Context(), bt); !errors.Is(err, kv.ErrTooLarge) {
			t.Errorf("a batch past Limits.Ops: %v, want ErrTooLarge", err)
		}
		if got := scan(t, s, "records/", ""); len(got) != 0 {
			t.Errorf("the refused batch was written in part: %d records", len(got))
		}
	}
}

// testStacks: Stacks lists what exists, apart by name even where one name
// begins another's; Remove deletes one whole.
func testStacks(t *testing.T, h Harness) {
	b := h.New(t)
	for _, stack := range []string{"prod", "prod2", "dev", "prod.eu"} {
		s := open(t, b, stack, kv.Options{Write: true, Init: meta})
		write(t, s, &kv.Batch{Ops: []kv.Op{{Key: "records/only-" + stack, Value: []byte(stack)}}})
		s.Close()
	}
	got, err := b.Stacks(t.Context())
	if err != nil || !slices.Equal(got, []string{"dev", "prod", "prod.eu", "prod2"}) {
		t.Fatalf("Stacks = %v, %v", got, err)
	}
	s := open(t, b, "prod", kv.Options{})
	if got := scan(t, s, "records/", ""); !slices.Equal(got, []string{"records/only-prod=prod"}) {
		t.Errorf("stack prod holds %q", got)
	}
	s.Close()
	if err := b.Remove(t.Context(), "prod", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(t.Context(), "never", time.Minute); err != nil {
		t.Errorf("Remove of a stack that does not exist: %v", err)
	}
	if got, _ := b.Stacks(t.Context()); !slices.Equal(got, []string{"dev", "prod.eu", "prod2"}) {
		t.Errorf("Stacks after Remove = %v", got)
	}
	s = open(t, b, "prod2", kv.Options{})
	if got := scan(t, s, "records/", ""); !slices.Equal(got, []string{"records/only-prod2=prod2"}) {
		t.Errorf("stack prod2 after prod's removal holds %q", got)
	}
}

// testConcurrent: one Store written from many goroutines at once.
func testConcurrent(t *testing.T, h Harness) {
	b := h.New(t)
	s := open(t, b, "prod", kv.Options{Write: true, Init: meta})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				bt := &kv.Batch{}
				bt.Put(fmt.Sprintf("records/g%d-%02d", g, i), []byte("v"))
				if err := s.Write(context.Background(), bt); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := scan(t, s, "records/", ""); len(got) != 80 {
		t.Errorf("%d records after 80 concurrent writes", len(got))
	}
}
