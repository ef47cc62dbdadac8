package state_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/bolt"
	"github.com/reconcile-dev/reconcile/state/kv"
	"github.com/reconcile-dev/reconcile/state/kv/kvtest"
	"github.com/reconcile-dev/reconcile/state/statetest"
)

// The model has the method set of every store: pin it.
var _ statetest.Store = (*state.Store)(nil)

// newBolt returns a backend of bbolt files in a directory of t's.
func newBolt(t *testing.T) kv.Backend {
	return bolt.New(filepath.Join(t.TempDir(), "state.db"))
}

// memLimits are the limits of the shared backend in memory: small, so
// that copies and rewrites take several writes, and records of the limit
// fit in a test.
var memLimits = kv.Limits{Ops: 64, Bytes: 64 << 10, Value: 48 << 10, Why: "the test's backend takes writes of up to 64 KiB"}

// newShared returns a shared backend in memory.
func newShared(t *testing.T) kv.Backend { return newMem(t.Name(), memLimits) }

// openFile returns a statetest.Opener of local files opened with
// state.Open, one file per test in its own temporary directory.
func openFile() statetest.Opener {
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
		return statetest.ModelStore{Store: s}, nil
	}
}

func TestContract(t *testing.T) {
	t.Parallel()
	statetest.Run(t, statetest.Model(newBolt))
}

func TestContractOpenPath(t *testing.T) {
	t.Parallel()
	statetest.Run(t, openFile())
}

func TestContractShared(t *testing.T) {
	t.Parallel()
	statetest.Run(t, statetest.Model(newShared))
}

// TestMemBackend checks that the shared backend the tests run the model
// on keeps the kv contract.
func TestMemBackend(t *testing.T) {
	t.Parallel()
	kvtest.Run(t, kvtest.Harness{
		New:    newShared,
		Expire: func(t *testing.T, b kv.Backend, stack string) { b.(*memBackend).expire(stack) },
	})
}

func TestCopy(t *testing.T) {
	t.Parallel()
	t.Run("file to file", func(t *testing.T) { statetest.RunCopy(t, openFile(), openFile()) })
	t.Run("file to shared", func(t *testing.T) { statetest.RunCopy(t, openFile(), statetest.Model(newShared)) })
	t.Run("shared to file", func(t *testing.T) { statetest.RunCopy(t, statetest.Model(newShared), statetest.Model(newBolt)) })
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
