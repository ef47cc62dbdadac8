package statetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"reconcile/state"
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
