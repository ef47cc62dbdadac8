package state_test

import (
	"path/filepath"
	"sync"
	"testing"

	"reconcile/state"
	"reconcile/state/statetest"
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

func (s boltStore) ObserveCommits(queued func(n int), commit func(calls int)) {
	state.SetCommitHooks(s.Store, queued, commit)
}

// OpenBolt returns a statetest.Opener of bbolt states, one file per test
// in its own temporary directory.
func OpenBolt() statetest.Opener {
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
	statetest.Run(t, OpenBolt())
}

func TestCopyBoltToBolt(t *testing.T) {
	t.Parallel()
	statetest.RunCopy(t, OpenBolt(), OpenBolt())
}
