package engine

import (
	"context"
	"errors"
	"sync"
)

// errSkipped marks a node that did not run because a dependency failed.
var errSkipped = errors.New("skipped: a dependency failed")

// walk runs fn once per node, each after all of its dependencies, with at
// most parallelism calls at once. A node whose dependency failed or was
// skipped is not run and gets errSkipped; every other node still runs.
// Dependencies outside nodes are ignored. It returns the error of every node
// that did not succeed.
func walk(ctx context.Context, nodes []string, deps map[string][]string, parallelism int, fn func(ctx context.Context, name string) error) map[string]error {
	if parallelism < 1 {
		parallelism = 1
	}
	in := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		in[n] = true
	}
	pending := make(map[string]int, len(nodes))
	dependents := make(map[string][]string, len(nodes))
	for _, n := range nodes {
		for _, d := range deps[n] {
			if in[d] && d != n {
				pending[n]++
				dependents[d] = append(dependents[d], n)
			}
		}
	}
	var (
		mu      sync.Mutex
		results = make(map[string]error)
		wg      sync.WaitGroup
		sem     = make(chan struct{}, parallelism)
		failed  = make(map[string]bool)
	)
	var finish func(name string, err error)
	var start func(name string)
	start = func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				finish(name, ctx.Err())
				return
			}
			// select picks at random when both are ready: start nothing
			// new once the context is done.
			if err := ctx.Err(); err != nil {
				<-sem
				finish(name, err)
				return
			}
			err := fn(ctx, name)
			<-sem
			finish(name, err)
		}()
	}
	finish = func(name string, err error) {
		mu.Lock()
		var ready []string
		var skip []string
		if err != nil {
			results[name] = err
			failed[name] = true
		}
		for _, d := range dependents[name] {
			if failed[name] {
				failed[d] = true
			}
			pending[d]--
			if pending[d] == 0 {
				if failed[d] {
					skip = append(skip, d)
				} else {
					ready = append(ready, d)
				}
			}
		}
		mu.Unlock()
		for _, d := range skip {
			finish(d, errSkipped)
		}
		for _, d := range ready {
			start(d)
		}
	}
	var roots []string
	for _, n := range nodes {
		if pending[n] == 0 {
			roots = append(roots, n)
		}
	}
	for _, n := range roots {
		start(n)
	}
	wg.Wait()
	return results
}
