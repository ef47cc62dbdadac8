package etcdstate_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

func TestSnapshotIsolation(t *testing.T) {
	t.Parallel()
	o := newStack(etcdtest.Start(t))
	o.Create = true
	w := mustOpen(t, o)
	a1, _ := w.Put(state.Record{Name: "a", ID: "a1"})
	w.Put(state.Record{Name: "b", ID: "b2"})
	r := o
	r.ReadOnly = true
	plan := mustOpen(t, r)
	before, err := plan.Dump()
	if err != nil {
		t.Fatal(err)
	}

	// An apply writes while the plan reads.
	if _, err := w.Put(state.Record{Name: "a", ID: "a3"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutAndClearIntent(state.Record{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddHistory(state.HistoryEntry{Command: "apply"}); err != nil {
		t.Fatal(err)
	}

	if m, _ := plan.Meta(); m.Serial != 2 {
		t.Errorf("the plan's Meta().Serial after the apply wrote = %d, want 2, its snapshot's", m.Serial)
	}
	if got, _, _ := plan.Get("a"); !reflect.DeepEqual(got, a1) {
		t.Errorf("the plan's Get(a) = %+v, want %+v, as of its Open", got, a1)
	}
	if rs, _ := plan.List(); len(rs) != 2 || rs[0].ID != "a1" || rs[1].ID != "b2" {
		t.Errorf("the plan's List() = %+v, want a1 and b2", rs)
	}
	if _, ok, _ := plan.Version("a", 100); !ok {
		t.Errorf("the plan's Version(a, 100) = not found, want a1")
	}
	if hs, _ := plan.History(); len(hs) != 0 {
		t.Errorf("the plan's History() = %+v, want none", hs)
	}
	if after, err := plan.Dump(); err != nil || !after.Equal(before) {
		t.Errorf("the plan's Dump() after the apply wrote = %v, %v, want %v", after, err, before)
	}
	if m, _ := mustOpen(t, r).Meta(); m.Serial != 5 {
		t.Errorf("a new reader's serial = %d, want 5", m.Serial)
	}
}

func TestGroupsSplit(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	o := newStack(endpoints)
	o.Create, o.MaxTxnOps = true, 8 // 3 puts (2 operations each) and the serial
	s := mustOpen(t, o)
	const n = 20
	var (
		mu        sync.Mutex
		commits   []int
		started   = make(chan struct{})
		release   = make(chan struct{})
		allQueued = make(chan struct{})
	)
	etcdstate.SetCommitHooks(s, func(queued int) {
		if queued == n-1 {
			close(allQueued)
		}
	}, func(calls int) {
		mu.Lock()
		commits = append(commits, calls)
		first := len(commits) == 1
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
	})
	before, err := cli.Get(t.Context(), "any")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	put := func(i int) {
		_, errs[i] = s.Put(state.Record{Name: fmt.Sprintf("r%02d", i), Inputs: map[string]any{"i": i}})
	}
	wg.Go(func() { put(0) })
	<-started
	for i := 1; i < n; i++ {
		wg.Go(func() { put(i) })
	}
	<-allQueued
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Put %d = %v", i, err)
		}
	}
	after, err := cli.Get(t.Context(), "any")
	if err != nil {
		t.Fatal(err)
	}
	// 1 alone, then 19 in transactions of at most 3.
	if want := []int{1, 3, 3, 3, 3, 3, 3, 1}; !reflect.DeepEqual(commits, want) {
		t.Errorf("20 puts with 8 operations per transaction made transactions of %v calls, want %v", commits, want)
	}
	if got := after.Header.Revision - before.Header.Revision; got != int64(len(commits)) {
		t.Errorf("the revision grew by %d over %d transactions, want one per transaction", got, len(commits))
	}
	if m, _ := s.Meta(); m.Serial != n {
		t.Errorf("serial after %d puts = %d", n, m.Serial)
	}
	if rs, _ := s.List(); len(rs) != n {
		t.Errorf("List() after %d puts = %d records", n, len(rs))
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	o := newStack(etcdtest.Start(t))
	o.Create, o.MaxRequestBytes, o.MaxTxnOps = true, 64<<10, 6
	s := mustOpen(t, o)
	if _, err := s.Put(state.Record{Name: "big", Inputs: map[string]any{"pad": strings.Repeat("x", 100<<10)}}); err == nil || !strings.Contains(err.Error(), "too large for one etcd transaction") {
		t.Errorf("Put of a record beyond the request limit = %v, want an error saying it is too large", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.Put(state.Record{Name: name, Dependencies: []string{"base"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(state.Record{Name: "base"}); err != nil {
		t.Fatal(err)
	}
	// A rename of base rewrites 4 records: 9 operations.
	if err := s.Rename("base", "root"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("Rename beyond the transaction limit = %v, want an error saying it is too large", err)
	}
	if m, _ := s.Meta(); m.Serial != 4 {
		t.Errorf("serial after refused writes = %d, want 4", m.Serial)
	}
}

// TestRecordLimitOfOptions: the limit Options give, without a Store, is
// the limit of the Store they open, with etcd's default request size or
// another.
func TestRecordLimitOfOptions(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	for _, size := range []int{0, 64 << 10} {
		o := newStack(endpoints)
		o.Create, o.MaxRequestBytes = true, size
		s := mustOpen(t, o)
		if got, want := o.RecordLimit(), s.RecordLimit(); got != want {
			t.Errorf("Options{MaxRequestBytes: %d}.RecordLimit() = %+v, want the Store's %+v", size, got, want)
		}
	}
}

func TestLeaderLoss(t *testing.T) {
	t.Parallel()
	members := etcdtest.StartCluster(t, 3)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.Endpoint)
	}
	o := newStack(endpoints)
	o.Create, o.RequestTimeout = true, time.Minute
	s := mustOpen(t, o)
	acked := map[string]state.Record{}
	put := func(i int) {
		r := state.Record{Name: fmt.Sprintf("r%02d", i), Inputs: map[string]any{"i": int64(i)}}
		var err error
		for try := range 10 {
			var got state.Record
			if got, err = s.Put(r); err == nil {
				acked[r.Name] = got
				return
			}
			t.Logf("Put(%s) try %d: %v", r.Name, try, err)
		}
		t.Fatalf("Put(%s) failed 10 times, last: %v", r.Name, err)
	}
	for i := range 10 {
		put(i)
	}
	var leader *etcdtest.Member
	for _, m := range members {
		if m.IsLeader() {
			leader = m
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	leader.Stop()
	<-leader.Stopped()
	for i := 10; i < 20; i++ {
		put(i)
	}
	select {
	case <-s.Lost():
		t.Fatalf("the lock was lost over a leader election")
	default:
	}

	// Everything acknowledged is there, for a new reader too.
	r := o
	r.ReadOnly = true
	reader := mustOpen(t, r)
	for name, want := range acked {
		for _, st := range []*etcdstate.Store{s, reader} {
			got, ok, err := st.Get(name)
			if err != nil || !ok || got.Inputs["i"] != want.Inputs["i"] {
				t.Errorf("Get(%s) after the leader was lost = %+v, %v, %v, want %+v", name, got, ok, err, want)
			}
			if v, ok, err := st.Version(name, want.Serial); err != nil || !ok || v.Serial != want.Serial {
				t.Errorf("Version(%s, %d) after the leader was lost = %+v, %v, %v", name, want.Serial, v, ok, err)
			}
		}
	}
	if m, _ := reader.Meta(); m.Serial < 20 {
		t.Errorf("serial after 20 acknowledged puts = %d", m.Serial)
	}
}

func TestStacks(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	base := etcdstate.Options{Endpoints: endpoints, Prefix: "/reconcile/stacks-test/"}
	for _, name := range []string{"prod", "b", "b-x", "b0", "staging"} {
		o := base
		o.Stack, o.Create, o.ReadOnly = name, true, true
		mustOpen(t, o).Close()
	}
	// Keys that are not stacks: a loose key, and a folder without meta.
	if _, err := cli.Put(t.Context(), "/reconcile/stacks-test/loose", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), "/reconcile/stacks-test/junk/records/a", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), "/reconcile/stacks-testing/other/meta/format", "x"); err != nil {
		t.Fatal(err)
	}
	got, err := etcdstate.Stacks(t.Context(), base)
	if want := []string{"b", "b-x", "b0", "prod", "staging"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Stacks() = %q, %v, want %q", got, err, want)
	}
	base.Prefix = "/nothing"
	if got, err := etcdstate.Stacks(t.Context(), base); err != nil || len(got) != 0 {
		t.Errorf("Stacks() of an empty prefix = %q, %v, want none", got, err)
	}
	// A stack without meta is damaged, not missing.
	o := base
	o.Prefix, o.Stack, o.Create = "/reconcile/stacks-test", "junk", true
	if _, err := etcdstate.Open(t.Context(), o); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("Open of a stack with records but no meta = %v, want ErrCorrupt", err)
	}
}

func TestDamagedMeta(t *testing.T) {
	t.Parallel()
	endpoints := etcdtest.Start(t)
	cli := client(t, endpoints)
	for name, tc := range map[string]struct {
		key   string
		value func(old []byte) []byte
		want  error
	}{
		"serial flipped":  {"meta/serial", func(v []byte) []byte { v[0] ^= 0xff; return v }, state.ErrCorrupt},
		"lineage flipped": {"meta/lineage", func(v []byte) []byte { v[0] ^= 0xff; return v }, state.ErrCorrupt},
		"key short":       {"meta/key", func(v []byte) []byte { return v[:10] }, state.ErrCorrupt},
		"newer format":    {"meta/format", func(v []byte) []byte { v[7]++; return v }, state.ErrNewerFormat},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := newStack(endpoints)
			o.Create = true
			w := mustOpen(t, o)
			if _, err := w.Put(state.Record{Name: "a"}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			key := o.Prefix + "/" + o.Stack + "/" + tc.key
			resp, err := cli.Get(t.Context(), key)
			if err != nil || len(resp.Kvs) == 0 {
				t.Fatal(err)
			}
			if _, err := cli.Put(t.Context(), key, string(tc.value(resp.Kvs[0].Value))); err != nil {
				t.Fatal(err)
			}
			for _, opts := range []state.Options{{}, {ReadOnly: true}, {Create: true}} {
				o.Options = opts
				s, err := etcdstate.Open(t.Context(), o)
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), o.String()) {
					t.Errorf("Open(%+v) of a stack with %s = %v, want an error wrapping %v naming the stack", opts, name, err, tc.want)
				}
			}
		})
	}
}

// TestNoStateNamesLocation checks the words of ErrNoState.
func TestNoStateNamesLocation(t *testing.T) {
	t.Parallel()
	o := newStack(etcdtest.Start(t))
	_, err := etcdstate.Open(t.Context(), o)
	want := fmt.Sprintf("state etcd://%s/reconcile/test (stack %s) does not exist", o.Endpoints[0], o.Stack)
	if !errors.Is(err, state.ErrNoState) || err.Error() != want {
		t.Errorf("Open of a missing stack = %q, want %q", err, want)
	}
	if s, err := etcdstate.Open(t.Context(), o); err == nil {
		s.Close()
	}
	cli := client(t, o.Endpoints)
	if resp, _ := cli.Get(t.Context(), o.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); resp.Count != 0 {
		t.Errorf("Open without Create wrote %d keys", resp.Count)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	o := etcdstate.Options{
		Endpoints:   []string{"127.0.0.1:1"}, // nothing listens on port 1
		Prefix:      testPrefix,
		Stack:       "prod",
		DialTimeout: 100 * time.Millisecond, RequestTimeout: 100 * time.Millisecond,
		Password: "pw-never-shown", Username: "u",
	}
	o.Create = true
	_, err := etcdstate.Open(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), o.String()) || strings.Contains(err.Error(), o.Password) {
		t.Errorf("Open of an unreachable cluster = %v, want an error naming %s", err, o)
	}
	for name, o := range map[string]etcdstate.Options{
		"no endpoints":    {Prefix: testPrefix, Stack: "prod"},
		"relative prefix": {Endpoints: o.Endpoints, Prefix: "reconcile", Stack: "prod"},
		"slash in stack":  {Endpoints: o.Endpoints, Prefix: testPrefix, Stack: "a/b"},
		"no stack":        {Endpoints: o.Endpoints, Prefix: testPrefix},
		"user in URL":     {Endpoints: []string{"u:pw-never-shown@127.0.0.1:1"}, Prefix: testPrefix, Stack: "prod"},
	} {
		if _, err := etcdstate.Open(t.Context(), o); err == nil || strings.Contains(err.Error(), "pw-never-shown") {
			t.Errorf("%s: Open = %v, want an error without credentials", name, err)
		}
	}
}
