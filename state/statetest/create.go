package statetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/state"
)

// testConcurrentCreate opens a state that does not exist yet from many
// goroutines at once, readers and writers alike, each allowed to create
// it, as the first CI jobs of a new stack do: every one must open the
// same new state, none may find it half made and call it damaged. A
// fresh state each round gives the race many chances.
func testConcurrentCreate(t *testing.T, open Opener) {
	const rounds, openers = 12, 8
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			var (
				wg       sync.WaitGroup
				start    = make(chan struct{})
				lineages = make([]string, openers)
				errs     = make([]error, openers)
			)
			for i := range openers {
				wg.Go(func() {
					opts := state.Options{Create: true, ReadOnly: i%2 == 0, LockTimeout: time.Minute, Command: "reconcile test"}
					<-start
					s, err := open(t, opts)
					if err != nil {
						errs[i] = fmt.Errorf("open %+v: %w", opts, err)
						return
					}
					defer s.Close()
					m, err := s.Meta()
					if err == nil {
						_, err = s.List()
					}
					if err != nil {
						errs[i] = fmt.Errorf("read after open %+v: %w", opts, err)
						return
					}
					lineages[i] = m.Lineage
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("opener %d of a state being created: %v", i, err)
				}
			}
			for i := range lineages {
				if errs[i] == nil && errs[0] == nil && lineages[i] != lineages[0] {
					t.Errorf("opener %d opened lineage %s, opener 0 lineage %s: want one state", i, lineages[i], lineages[0])
				}
			}
		})
	}
}

// testIncompleteCopy: a state made to receive a copy is no state until the
// copy's last write. Every Open but the copy's refuses it meanwhile,
// naming the copy to run again, and running it again completes it: when
// the copy never began, and when it stopped part way (on a backend that
// writes a large copy in several transactions).
func testIncompleteCopy(t *testing.T, open Opener) {
	mark := &state.CopyMark{From: "the source (stack test)", Command: "reconcile state migrate --to the-target"}
	snap := BenchSnapshot("3f1c0a52-6b8e-4c8e-9d4f-0c1e2a3b4c5d", make([]byte, 32), 150)
	snap.History = []state.HistoryEntry{{Serial: 150, Time: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), Command: "apply", Counts: state.Counts{Create: 150}}}

	t.Run("target", func(t *testing.T) {
		refused := func(when string) {
			t.Helper()
			for _, opts := range []state.Options{{ReadOnly: true}, {ReadOnly: true, Create: true}, {}, {Create: true}} {
				s, err := open(t, opts)
				if err == nil {
					s.Close()
					t.Errorf("open %+v %s = a store, want ErrIncomplete", opts, when)
					continue
				}
				var ie *state.IncompleteError
				if !errors.Is(err, state.ErrIncomplete) || !errors.As(err, &ie) || !strings.Contains(err.Error(), mark.Command) || !strings.Contains(err.Error(), mark.From) {
					t.Errorf("open %+v %s = %v, want ErrIncomplete naming the copy to run again", opts, when, err)
				}
			}
		}
		dst := mustOpen(t, open, state.Options{Create: true, Copy: mark})
		dst.Close()
		refused("of a state made for a copy that never began")

		// A copy that stops after its first write, where it takes several.
		var total int
		dst = mustOpen(t, open, state.Options{Copy: mark, OnLoad: func(done, n int) {
			total = n
			if done == 1 && n > 1 {
				dst.Close() // the rest is never written
			}
		}})
		err := dst.Load(snap)
		if total > 1 {
			if err == nil {
				t.Fatalf("Load through a store closed after its first of %d writes = nil, want an error", total)
			}
			refused("after a copy stopped part way")
			dst = mustOpen(t, open, state.Options{Copy: mark})
			if err := dst.Load(snap); err != nil {
				t.Fatalf("Load again, to complete the copy = %v", err)
			}
		} else if err != nil {
			t.Fatalf("Load = %v", err)
		}
		dst.Close()

		s := mustOpen(t, open, state.Options{ReadOnly: true})
		if got, err := s.Dump(); err != nil || !got.Equal(snap) {
			t.Errorf("Dump() of the completed copy = %v, %v, want %v", got, err, snap)
		}
		s.Close()
		// A copy run again over a complete one changes nothing.
		w := mustOpen(t, open, state.Options{Copy: mark})
		if err := w.Load(snap); err != nil {
			t.Errorf("Load of the same snapshot into the complete copy = %v", err)
		}
	})
}
