package dag

import (
	"context"
	"errors"
	"sync"
)

// ErrSkipped marks a node that did not run because a dependency failed.
var ErrSkipped = errors.New("skipped: a dependency failed")

// ErrStopped marks a node that did not start because the walk was stopped
// (its stop channel closed, or its context ended) before it could.
var ErrStopped = errors.New("not started: stopped")

// Walk runs fn once per node, each after all of its dependencies, with at
// most parallelism calls at once. A node whose dependency failed or was
// skipped is not run and gets ErrSkipped; every other node still runs.
// Dependencies outside nodes are ignored. It returns the error of every node
// that did not succeed. Once ctx is done it starts nothing more: the nodes
// not started get ctx's error.
func Walk(ctx context.Context, nodes []string, deps map[string][]string, parallelism int, fn func(ctx context.Context, name string) error) map[string]error {
	return WalkStop(ctx, nil, nodes, deps, parallelism, fn)
}

// WalkStop is Walk with a stop channel: once stop is closed (a nil channel
// never is), it starts no new node, while the calls of fn already running
// go on to their end. The nodes not started get ErrStopped, as do the ones
// that depend on a node that did not start because of stop; the ones that
// depend on a node that did not start, or was cut short, because ctx ended
// get ctx's error.
func WalkStop(ctx context.Context, stop <-chan struct{}, nodes []string, deps map[string][]string, parallelism int, fn func(ctx context.Context, name string) error) map[string]error {
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
		// inherit is what the dependents of a node that did not succeed
		// get: ErrSkipped, or ErrStopped when it did not start.
		inherit = make(map[string]error)
	)
	stopped := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-stop:
			return ErrStopped
		default:
			return nil
		}
	}
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
			case <-stop:
				finish(name, ErrStopped)
				return
			}
			// select picks at random when several are ready: start
			// nothing new once the walk is stopped.
			if err := stopped(); err != nil {
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
			if inherit[name] == nil {
				inherit[name] = ErrSkipped
			}
			switch {
			case errors.Is(err, ErrStopped):
				// Did not start: neither do its dependents, which are
				// not started rather than skipped, unless another
				// dependency of theirs failed.
				inherit[name] = ErrStopped
			case ctx.Err() != nil && errors.Is(err, ctx.Err()):
				// Did not start, or was cut short, because ctx ended.
				inherit[name] = ctx.Err()
			}
		}
		for _, d := range dependents[name] {
			if err != nil && inherit[d] != ErrSkipped {
				inherit[d] = inherit[name]
			}
			pending[d]--
			if pending[d] == 0 {
				if inherit[d] != nil {
					skip = append(skip, d)
				} else {
					ready = append(ready, d)
				}
			}
		}
		mu.Unlock()
		for _, d := range skip {
			mu.Lock()
			e := inherit[d]
			mu.Unlock()
			finish(d, e)
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
