package state

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/kind"
)

func TestConcurrentPut(t *testing.T) {
	t.Parallel()
	path := statePath(t)
	s := openStore(t, path, Options{Create: true})
	const n = 20
	var (
		wg   sync.WaitGroup
		puts [n]Record
		errs [n]error
	)
	for i := range n {
		wg.Go(func() {
			puts[i], errs[i] = s.Put(Record{Name: fmt.Sprintf("r%02d", i), Kind: kind.Resource, Outputs: map[string]any{"i": i}})
		})
	}
	wg.Wait()
	seen := map[int64]string{}
	for i, r := range puts {
		if errs[i] != nil {
			t.Fatalf("Put(r%02d) = %v", i, errs[i])
		}
		if other, dup := seen[r.Serial]; dup {
			t.Errorf("Put(%s) and Put(%s) both got serial %d", r.Name, other, r.Serial)
		}
		seen[r.Serial] = r.Name
		if r.Serial < 1 || r.Serial > n {
			t.Errorf("Put(%s).Serial = %d, want 1..%d", r.Name, r.Serial, n)
		}
	}
	s.Close()

	s = openStore(t, path, Options{ReadOnly: true})
	if got := mustSerial(t, s); got != n {
		t.Errorf("serial after %d concurrent puts = %d, want %d", n, got, n)
	}
	rs, err := s.List()
	if err != nil || len(rs) != n {
		t.Fatalf("List() after %d concurrent puts = %d records, %v", n, len(rs), err)
	}
	for i, r := range rs {
		if r.Outputs["i"] != int64(i) || r.Serial != puts[i].Serial {
			t.Errorf("record %s = %+v, want output i=%d at serial %d", r.Name, r, i, puts[i].Serial)
		}
		if v, ok, _ := s.Version(r.Name, r.Serial); !ok || v.Serial != r.Serial {
			t.Errorf("Version(%s, %d) = %+v, %v, want that version", r.Name, r.Serial, v, ok)
		}
	}
}

func TestCommitGroupsWrites(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustPut(t, s, Record{Name: "doomed"})

	// Hold bbolt's write lock so that the first writer blocks inside its
	// write and all the others queue up behind it.
	tx, err := s.rawDB().Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	s.ObserveCommits(func(int) {}, func(int) {
		select {
		case <-started:
		default:
			close(started)
		}
	})
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	write := func(i int) {
		switch i % 4 {
		case 0, 1:
			_, errs[i] = s.Put(Record{Name: fmt.Sprintf("r%02d", i)})
		case 2:
			errs[i] = s.Delete(fmt.Sprintf("missing%02d", i)) // fails inside the group
		case 3:
			errs[i] = s.PutIntent(Intent{Name: fmt.Sprintf("i%02d", i), Token: "t"})
		}
	}
	wg.Go(func() { write(0) })
	<-started // the first writer's write waits for the lock
	for i := 1; i < n; i++ {
		wg.Go(func() { write(i) })
	}
	for queued := 0; queued < n-1; {
		runtime.Gosched()
		s.mu.Lock()
		queued = len(s.queue)
		s.mu.Unlock()
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	puts := 0
	for i, err := range errs {
		switch {
		case i%4 == 2 && !errors.Is(err, ErrNoRecord):
			t.Errorf("Delete(missing%02d) in a group = %v, want ErrNoRecord", i, err)
		case i%4 != 2 && err != nil:
			t.Errorf("write %d in a group = %v, want success", i, err)
		case i%4 < 2:
			puts++
		}
	}
	if got, want := mustSerial(t, s), int64(1+puts); got != want {
		t.Errorf("serial after 1 + %d grouped puts = %d, want %d", puts, got, want)
	}
	if rs, _ := s.List(); len(rs) != 1+puts {
		t.Errorf("List() after grouped puts = %q, want %d records", names(rs), 1+puts)
	}
	if ins, _ := s.Intents(); len(ins) != n/4 {
		t.Errorf("Intents() after grouped puts = %d intents, want %d", len(ins), n/4)
	}
}

func BenchmarkPut(b *testing.B) {
	s := newStore(b)
	r := Record{
		Type:    "oci:AiLanguage:Endpoint",
		Kind:    kind.Resource,
		Inputs:  map[string]any{"displayName": "sentiment-prod", "inferenceUnits": 2},
		Outputs: map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "lifecycleState": "ACTIVE"},
	}
	i := 0
	for b.Loop() {
		r.Name = fmt.Sprintf("r%03d", i%100)
		i++
		if _, err := s.Put(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPutParallel(b *testing.B) {
	s := newStore(b)
	var (
		mu sync.Mutex
		n  int
	)
	b.SetParallelism(5) // 5 × GOMAXPROCS goroutines: 10 on 2 cores, like --parallelism 10
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		g := n
		n++
		mu.Unlock()
		r := Record{
			Type:    "oci:AiLanguage:Endpoint",
			Kind:    kind.Resource,
			Inputs:  map[string]any{"displayName": "sentiment-prod", "inferenceUnits": 2},
			Outputs: map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "lifecycleState": "ACTIVE"},
		}
		i := 0
		for pb.Next() {
			r.Name = fmt.Sprintf("g%02d-r%03d", g, i%100)
			i++
			if _, err := s.Put(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkPutAndClearIntentParallel(b *testing.B) {
	s := newStore(b)
	var (
		mu sync.Mutex
		n  int
	)
	b.SetParallelism(5) // 10 goroutines on 2 cores, like --parallelism 10
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		g := n
		n++
		mu.Unlock()
		r := Record{
			Type:    "oci:AiLanguage:Endpoint",
			Kind:    kind.Resource,
			Inputs:  map[string]any{"displayName": "sentiment-prod", "inferenceUnits": 2},
			Outputs: map[string]any{"id": "ocid1.ailanguageendpoint.oc1.iad.x", "lifecycleState": "ACTIVE"},
		}
		i := 0
		for pb.Next() {
			r.Name = fmt.Sprintf("g%02d-r%03d", g, i%100)
			i++
			if _, err := s.PutAndClearIntent(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
