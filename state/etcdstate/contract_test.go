package etcdstate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/statetest"
)

// Both stores have one method set: pin it.
var (
	_ statetest.Store = (*etcdstate.Store)(nil)
	_ statetest.Store = (*state.Store)(nil)
)

// testPrefix is the key prefix of the tests' stacks.
const testPrefix = "/reconcile/test"

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

// etcdStore is an *etcdstate.Store whose test can damage it and watch its
// commits.
type etcdStore struct {
	*etcdstate.Store
	cli *clientv3.Client
}

func (s etcdStore) DamageRecord(t *testing.T, name string) {
	t.Helper()
	key := etcdstate.RecordKey(s.Store, name)
	resp, err := s.cli.Get(t.Context(), key)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("get %q to damage it: %v", key, err)
	}
	v := resp.Kvs[0].Value
	v[len(v)-1] ^= 0xff
	if _, err := s.cli.Put(t.Context(), key, string(v)); err != nil {
		t.Fatalf("damage %q: %v", key, err)
	}
}

func (s etcdStore) DeleteRecordKey(t *testing.T, name string) {
	t.Helper()
	if _, err := s.cli.Delete(t.Context(), etcdstate.RecordKey(s.Store, name)); err != nil {
		t.Fatalf("delete record %q: %v", name, err)
	}
}

func (s etcdStore) DeleteRecordCount(t *testing.T) {
	t.Helper()
	if _, err := s.cli.Delete(t.Context(), etcdstate.CountKey(s.Store)); err != nil {
		t.Fatalf("delete the record count: %v", err)
	}
}

func (s etcdStore) ObserveCommits(queued func(n int), commit func(calls int)) {
	etcdstate.SetCommitHooks(s.Store, queued, commit)
}

// stackCount numbers the stacks of the tests of this process.
var stackCount atomic.Int64

// newStack returns options naming a new stack on endpoints.
func newStack(endpoints []string) etcdstate.Options {
	return etcdstate.Options{
		Endpoints: endpoints,
		Prefix:    testPrefix,
		Stack:     fmt.Sprintf("s%03d", stackCount.Add(1)),
	}
}

// openEtcd returns a statetest.Opener of stacks on endpoints, one per
// test, each also configured by configure if it is not nil.
func openEtcd(endpoints []string, configure func(*etcdstate.Options)) statetest.Opener {
	var (
		mu     sync.Mutex
		stacks = map[*testing.T]etcdstate.Options{}
	)
	return func(t *testing.T, opts state.Options) (statetest.Store, error) {
		mu.Lock()
		o, ok := stacks[t]
		if !ok {
			o = newStack(endpoints)
			if configure != nil {
				configure(&o)
			}
			stacks[t] = o
		}
		mu.Unlock()
		o.Options = opts
		s, err := etcdstate.Open(t.Context(), o)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { s.Close() })
		return etcdStore{s, client(t, endpoints)}, nil
	}
}

// openBolt returns a statetest.Opener of bbolt files, one per test.
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
		return s, nil
	}
}

func TestContract(t *testing.T) {
	t.Parallel()
	statetest.Run(t, openEtcd(etcdtest.Start(t), nil))
}

func TestCopyBetweenBackends(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	t.Run("bbolt to etcd", func(t *testing.T) {
		t.Parallel()
		statetest.RunCopy(t, openBolt(), openEtcd(endpoints, nil))
	})
	t.Run("etcd to bbolt", func(t *testing.T) {
		t.Parallel()
		statetest.RunCopy(t, openEtcd(endpoints, nil), openBolt())
	})
	t.Run("etcd to etcd in small transactions", func(t *testing.T) {
		t.Parallel()
		statetest.RunCopy(t, openEtcd(endpoints, nil), openEtcd(endpoints, func(o *etcdstate.Options) { o.MaxTxnOps = 4 }))
	})
}

// mustOpen opens o and closes it at the end of t.
func mustOpen(t *testing.T, o etcdstate.Options) *etcdstate.Store {
	t.Helper()
	s, err := etcdstate.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open(%v) = %v", o, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
