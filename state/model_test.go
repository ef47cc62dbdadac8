package state_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// openMem opens stack of b, closed when t ends.
func openMem(t *testing.T, b kv.Backend, opts state.Options) *state.Store {
	t.Helper()
	s, err := state.OpenBackend(t.Context(), b, "prod", opts)
	if err != nil {
		t.Fatalf("OpenBackend(%+v) = %v", opts, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestUnknownOutcome: after a write whose outcome the backend could not
// tell, made or not, the writer reads the stack again before its next
// write, which then builds on what is stored (no write refused for a
// serial it did not expect), and the serial, the records and their count
// are right.
func TestUnknownOutcome(t *testing.T) {
	t.Parallel()
	for _, made := range []bool{true, false} {
		t.Run(fmt.Sprintf("made %v", made), func(t *testing.T) {
			t.Parallel()
			b := newMem(t.Name(), memLimits)
			s := openMem(t, b, state.Options{Create: true})
			if _, err := s.Put(state.Record{Name: "a", Kind: kind.Resource}); err != nil {
				t.Fatal(err)
			}
			once := true
			b.mu.Lock()
			b.unknown = func(*kv.Batch) (bool, bool) {
				fail := once
				once = false
				return fail, made
			}
			b.mu.Unlock()
			_, err := s.Put(state.Record{Name: "b", Kind: kind.Resource})
			if !errors.Is(err, kv.ErrUnknownOutcome) {
				t.Fatalf("Put whose outcome is unknown = %v, want kv.ErrUnknownOutcome", err)
			}
			if err := s.Delete("a"); err != nil {
				t.Fatalf("Delete after a write of unknown outcome = %v", err)
			}
			c, err := s.Put(state.Record{Name: "c", Kind: kind.Resource})
			want := int64(3)
			if made {
				want = 4
			}
			if err != nil || c.Serial != want {
				t.Errorf("Put after a write of unknown outcome = serial %d, %v; want %d", c.Serial, err, want)
			}
			if b.conflicts != 0 {
				t.Errorf("%d writes were refused for a serial the writer did not expect: it did not read the stack again first", b.conflicts)
			}
			rs, err := s.List() // checks the record count too
			if err != nil || len(rs) != map[bool]int{true: 2, false: 1}[made] {
				t.Errorf("List() = %d records, %v", len(rs), err)
			}
		})
	}
}

// TestLeaseLost: a writer whose lease lapsed writes nothing more, says so
// with ErrLockLost, and another writer takes the lock.
func TestLeaseLost(t *testing.T) {
	t.Parallel()
	b := newMem(t.Name(), memLimits)
	s := openMem(t, b, state.Options{Create: true})
	if err := s.Held(); err != nil {
		t.Fatalf("Held() = %v", err)
	}
	b.expire("prod")
	<-s.Lost()
	if err := s.Held(); !errors.Is(err, state.ErrLockLost) {
		t.Errorf("Held() after the lease lapsed = %v, want ErrLockLost", err)
	}
	next := openMem(t, b, state.Options{})
	if _, err := next.Put(state.Record{Name: "next"}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Put":        func() error { _, err := s.Put(state.Record{Name: "stale"}); return err }(),
		"PutIntent":  s.PutIntent(state.Intent{Name: "stale", Token: "t"}),
		"AddHistory": s.AddHistory(state.HistoryEntry{Command: "apply"}),
		"Rename":     s.Rename("next", "stale"),
	} {
		if !errors.Is(err, state.ErrLockLost) {
			t.Errorf("%s by the writer whose lease lapsed = %v, want ErrLockLost", name, err)
		}
	}
	if rs, _ := next.List(); len(rs) != 1 || rs[0].Name != "next" {
		t.Errorf("records after the stale writer's writes = %v", rs)
	}
}

// TestAbsent: a plan of a stack of a shared backend that does not exist
// reads an empty state and writes nothing.
func TestAbsent(t *testing.T) {
	t.Parallel()
	b := newMem(t.Name(), memLimits)
	if _, err := state.OpenBackend(t.Context(), b, "prod", state.Options{ReadOnly: true}); !errors.Is(err, state.ErrNoState) {
		t.Errorf("OpenBackend of a missing stack without Create = %v, want ErrNoState", err)
	}
	s := openMem(t, b, state.Options{ReadOnly: true, Create: true, NoCreateShared: true})
	if !s.Absent() || !s.KeepsValues() {
		t.Errorf("Absent() = %v, KeepsValues() = %v; want both", s.Absent(), s.KeepsValues())
	}
	m, err := s.Meta()
	key, kerr := s.SecretKey()
	rs, lerr := s.List()
	if err != nil || m != (state.Meta{FormatVersion: state.FormatVersion}) || kerr != nil || len(key) != 32 || lerr != nil || len(rs) != 0 {
		t.Errorf("an absent stack reads Meta %+v, %v; key of %d bytes, %v; List %v, %v", m, err, len(key), kerr, rs, lerr)
	}
	if _, err := s.Put(state.Record{Name: "a"}); !errors.Is(err, state.ErrReadOnly) {
		t.Errorf("Put on an absent stack = %v, want ErrReadOnly", err)
	}
	if stacks, _ := b.Stacks(t.Context()); len(stacks) != 0 || b.writes != 0 {
		t.Errorf("opening an absent stack made %v (%d writes)", stacks, b.writes)
	}
	if f := openMem(t, newBolt(t), state.Options{Create: true}); f.KeepsValues() {
		t.Errorf("KeepsValues() of a local file = true")
	}
}

// TestGroupSplits: concurrent writes too many for one write of the
// backend are split into several, each within its limits, the serial
// growing by one per change.
func TestGroupSplits(t *testing.T) {
	t.Parallel()
	b := newMem(t.Name(), kv.Limits{Ops: 12, Bytes: 64 << 10, Value: 16 << 10, Why: "the test's"})
	s := openMem(t, b, state.Options{Create: true})
	var commits []int
	var mu sync.Mutex
	s.ObserveCommits(func(int) {}, func(calls int) {
		mu.Lock()
		commits = append(commits, calls)
		mu.Unlock()
	})
	const n = 40
	var wg sync.WaitGroup
	serials := make([]int64, n)
	for i := range n {
		wg.Go(func() {
			r, err := s.Put(state.Record{Name: fmt.Sprintf("r%02d", i)})
			if err != nil {
				t.Error(err)
			}
			serials[i] = r.Serial
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, serial := range serials {
		if seen[serial] || serial < 1 || serial > n {
			t.Errorf("serials %v: want 1 to %d, each once", serials, n)
			break
		}
		seen[serial] = true
	}
	for _, calls := range commits {
		if 2*calls+4 > 12 {
			t.Errorf("a write of %d puts of a record and its version: more than 12 operations", calls)
		}
	}
	if rs, err := s.List(); err != nil || len(rs) != n {
		t.Errorf("List() = %d records, %v", len(rs), err)
	}
}
