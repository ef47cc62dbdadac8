package statetest

import (
	"context"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// Stack is the stack the Openers of Model open on each test's backend:
// the default stack, whose local file is the path a backend is given.
const Stack = "default"

// Model returns an Opener of the model's Stores (state.OpenBackend) over
// the backends newBackend makes: one backend per test, closed when the
// test ends, and on it the stack Stack. The Stores it opens implement
// Damager, KeyDeleter and CommitObserver, through the kv store under the
// model: so Run tests the model, with every rule it keeps, on any
// backend.
func Model(newBackend func(t *testing.T) kv.Backend) Opener {
	var (
		mu       sync.Mutex
		backends = map[*testing.T]kv.Backend{}
	)
	return func(t *testing.T, opts state.Options) (Store, error) {
		mu.Lock()
		b, ok := backends[t]
		if !ok {
			b = newBackend(t)
			backends[t] = b
			t.Cleanup(func() { b.Close() })
		}
		mu.Unlock()
		s, err := state.OpenBackend(t.Context(), b, Stack, opts)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { s.Close() })
		return ModelStore{s}, nil
	}
}

// ModelStore is a Store of the model that tests can damage, through the
// kv store under it.
type ModelStore struct{ *state.Store }

var (
	_ Damager        = ModelStore{}
	_ KeyDeleter     = ModelStore{}
	_ CommitObserver = ModelStore{}
)

// write writes b through the kv store under s.
func (s ModelStore) write(t *testing.T, b *kv.Batch) {
	t.Helper()
	if err := s.KV().Write(context.Background(), b); err != nil {
		t.Fatalf("write under the model: %v", err)
	}
}

// DamageRecord inverts the last byte of the stored record name.
func (s ModelStore) DamageRecord(t *testing.T, name string) {
	t.Helper()
	var v []byte
	err := s.KV().Read(context.Background(), func(vw kv.View) error {
		var err error
		v, err = vw.Get("records/" + name)
		return err
	})
	if err != nil || v == nil {
		t.Fatalf("read record %q to damage it: %v", name, err)
	}
	v[len(v)-1] ^= 0xff
	b := &kv.Batch{}
	b.Put("records/"+name, v)
	s.write(t, b)
}

// DeleteRecordKey deletes the stored record name, and only it.
func (s ModelStore) DeleteRecordKey(t *testing.T, name string) {
	t.Helper()
	b := &kv.Batch{}
	b.Delete("records/" + name)
	s.write(t, b)
}

// DeleteRecordCount deletes the record count.
func (s ModelStore) DeleteRecordCount(t *testing.T) {
	t.Helper()
	b := &kv.Batch{}
	b.Delete("meta/count")
	s.write(t, b)
}
