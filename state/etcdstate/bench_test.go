package etcdstate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
	"github.com/reconcile-dev/reconcile/state/statetest"
)

// benchOpen opens a new stack on a member of its own, closed at the end
// of b.
func benchOpen(b *testing.B, o etcdstate.Options) *etcdstate.Store {
	b.Helper()
	s, err := etcdstate.Open(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkList10k lists 10,000 records from a read-only store.
func BenchmarkList10k(b *testing.B) {
	o := newStack(etcdtest.Start(b))
	o.Create = true
	w := benchOpen(b, o)
	snap, err := w.Dump()
	if err == nil {
		err = w.Load(statetest.BenchSnapshot(snap.Meta.Lineage, snap.Key, 10000))
	}
	if err != nil {
		b.Fatal(err)
	}
	w.Close()
	o.ReadOnly = true
	s := benchOpen(b, o)
	for b.Loop() {
		rs, err := s.List()
		if err != nil || len(rs) != 10000 {
			b.Fatalf("List() = %d records, %v", len(rs), err)
		}
	}
}

// benchParallel runs write from 10 goroutines on 2 cores (5 per
// GOMAXPROCS), like an apply with --parallelism 10.
func benchParallel(b *testing.B, write func(s *etcdstate.Store, r state.Record) error) {
	o := newStack(etcdtest.Start(b))
	o.Create = true
	s := benchOpen(b, o)
	var (
		mu sync.Mutex
		n  int
	)
	b.SetParallelism(5)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		g := n
		n++
		mu.Unlock()
		r := state.Record{
			Type:    "oci:AiLanguage:Endpoint",
			Kind:    kind.Resource,
			Inputs:  map[string]any{"displayName": "sentiment-prod", "inferenceUnits": 2},
			Outputs: map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "lifecycleState": "ACTIVE"},
		}
		i := 0
		for pb.Next() {
			r.Name = fmt.Sprintf("g%02d-r%03d", g, i%100)
			i++
			if err := write(s, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkPutParallel(b *testing.B) {
	benchParallel(b, func(s *etcdstate.Store, r state.Record) error {
		_, err := s.Put(r)
		return err
	})
}

func BenchmarkPutAndClearIntentParallel(b *testing.B) {
	benchParallel(b, func(s *etcdstate.Store, r state.Record) error {
		_, err := s.PutAndClearIntent(r)
		return err
	})
}

// BenchmarkIntentPutClear is the sequence an apply wrote before
// PutAndClearIntent, for comparison: three transactions per create.
func BenchmarkIntentPutClear(b *testing.B) {
	benchParallel(b, func(s *etcdstate.Store, r state.Record) error {
		if err := s.PutIntent(state.Intent{Name: r.Name, Token: "t"}); err != nil {
			return err
		}
		if _, err := s.Put(r); err != nil {
			return err
		}
		return s.ClearIntent(r.Name)
	})
}
