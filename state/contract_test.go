package state_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/statetest"
)

// Both stores have one method set: pin it.
var _ statetest.Store = (*state.Store)(nil)

// boltStore is a *state.Store whose test can damage it and watch its
// commits.
type boltStore struct{ *state.Store }

func (s boltStore) DamageRecord(t *testing.T, name string) {
	t.Helper()
	if err := state.DamageRecord(s.Store, name); err != nil {
		t.Fatalf("damage record %q: %v", name, err)
	}
}

func (s boltStore) DeleteRecordKey(t *testing.T, name string) {
	t.Helper()
	if err := state.DeleteRecordKey(s.Store, name); err != nil {
		t.Fatalf("delete record %q: %v", name, err)
	}
}

func (s boltStore) DeleteRecordCount(t *testing.T) {
	t.Helper()
	if err := state.DeleteRecordCount(s.Store); err != nil {
		t.Fatalf("delete the record count: %v", err)
	}
}

func (s boltStore) ObserveCommits(queued func(n int), commit func(calls int)) {
	state.SetCommitHooks(s.Store, queued, commit)
}

// openBolt returns a statetest.Opener of bbolt states, one file per test
// in its own temporary directory.
func openBolt() statetest.Opener {
	var (
		mu    sync.Mutex
		paths = map[*testing.T]string{}
	)
	return func(t *testing.T, opts state.Options) (statetest.Store, error) {
		mu.Lock()
		path, ok := paths[t]
		if !ok {
			path = filepath.Join(t.TempDir(), "state.db")
			paths[t] = path
		}
		mu.Unlock()
		s, err := state.Open(path, opts)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { s.Close() })
		return boltStore{s}, nil
	}
}

func TestContract(t *testing.T) {
	t.Parallel()
	statetest.Run(t, openBolt())
}

func TestCopyBoltToBolt(t *testing.T) {
	t.Parallel()
	statetest.RunCopy(t, openBolt(), openBolt())
}

// BenchmarkList10k lists 10,000 records from a read-only store.
func BenchmarkList10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	w, err := state.Open(path, state.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	snap, err := w.Dump()
	if err == nil {
		err = w.Load(statetest.BenchSnapshot(snap.Meta.Lineage, snap.Key, 10000))
	}
	w.Close()
	if err != nil {
		b.Fatal(err)
	}
	s, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		rs, err := s.List()
		if err != nil || len(rs) != 10000 {
			b.Fatalf("List() = %d records, %v", len(rs), err)
		}
	}
}
