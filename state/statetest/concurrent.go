package statetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/state"
)

func testCoalesced(t *testing.T, open Opener) {
	s := newStore(t, open)
	co, ok := s.(CommitObserver)
	if !ok {
		t.Skip("the Store cannot be watched committing")
	}
	const n = 20
	mustPut(t, s, state.Record{Name: "doomed"})
	for i := 9; i < n; i += 5 {
		if err := s.PutIntent(state.Intent{Name: fmt.Sprintf("c%02d", i), Token: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu        sync.Mutex
		commits   []int // calls in each commit
		started   = make(chan struct{})
		release   = make(chan struct{})
		allQueued = make(chan struct{})
	)
	co.ObserveCommits(func(queued int) {
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
	errs := make([]error, n)
	write := func(i int) {
		switch i % 5 {
		case 0, 1:
			_, errs[i] = s.Put(state.Record{Name: fmt.Sprintf("r%02d", i)})
		case 2:
			errs[i] = s.Delete(fmt.Sprintf("missing%02d", i)) // fails inside the group
		case 3:
			errs[i] = s.PutIntent(state.Intent{Name: fmt.Sprintf("i%02d", i), Token: "t"})
		case 4:
			if i == 4 {
				errs[i] = s.Delete("doomed")
			} else {
				_, errs[i] = s.PutAndClearIntent(state.Record{Name: fmt.Sprintf("c%02d", i)})
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { write(0) })
	<-started // the first commit runs, and waits for release
	for i := 1; i < n; i++ {
		wg.Go(func() { write(i) })
	}
	<-allQueued
	close(release)
	wg.Wait()

	puts := 0
	for i, err := range errs {
		switch {
		case i%5 == 2 && !errors.Is(err, state.ErrNoRecord):
			t.Errorf("Delete(missing%02d) in a group = %v, want ErrNoRecord", i, err)
		case i%5 != 2 && err != nil:
			t.Errorf("write %d in a group = %v, want success", i, err)
		case i%5 < 2 || i%5 == 4:
			puts++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The n-1 calls that queued up share a write, but for the deletes
	// that fail as it is built, and are left out of it.
	if len(commits) != 2 || commits[0] != 1 || commits[1] != n-1-n/5 {
		t.Errorf("%d concurrent writes ran writes of %v calls, want 1, then one of the %d others that queued meanwhile and did not fail", n, commits, n-1-n/5)
	}
	if got, want := mustSerial(t, s), int64(1+puts); got != want {
		t.Errorf("serial after 1 + %d grouped changes = %d, want %d", puts, got, want)
	}
	rs, _ := s.List()
	if len(rs) != puts-1 { // one of the changes deleted "doomed"
		t.Errorf("List() after grouped writes = %q, want %d records", names(rs), puts-1)
	}
	ins, _ := s.Intents()
	if len(ins) != n/5 { // the i## PutIntent wrote; PutAndClearIntent cleared the c##
		var ns []string
		for _, in := range ins {
			ns = append(ns, in.Name)
		}
		t.Errorf("Intents() after grouped writes = %q, want %d", ns, n/5)
	}
}

func testConcurrentPut(t *testing.T, open Opener) {
	s := newStore(t, open)
	const n = 20
	var (
		wg   sync.WaitGroup
		puts [n]state.Record
		errs [n]error
	)
	for i := range n {
		wg.Go(func() {
			puts[i], errs[i] = s.Put(state.Record{Name: fmt.Sprintf("r%02d", i), Outputs: map[string]any{"i": i}})
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
	}
	s.Close()
	s = mustOpen(t, open, state.Options{ReadOnly: true})
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
