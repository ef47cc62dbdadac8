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
	w := newWalker(ctx, stop, nodes, deps, parallelism, fn)
	// The roots are all known before the first starts: from then on,
	// pending is the walk's to change.
	var roots []string
	for _, n := range nodes {
		if w.pending[n] == 0 {
			roots = append(roots, n)
		}
	}
	// A pool of workers runs the nodes as they become ready, rather than
	// a goroutine per node: a walk of many nodes starts no more goroutines
	// than calls run at once, and each keeps the stack its calls grew.
	var workers sync.WaitGroup
	for range min(max(parallelism, 1), len(nodes)) {
		workers.Go(w.work)
	}
	for _, n := range roots {
		w.start(n)
	}
	w.wg.Wait()
	close(w.ready)
	workers.Wait()
	return w.results
}

// walker is the state of one WalkStop.
type walker struct {
	ctx  context.Context
	stop <-chan struct{}
	fn   func(ctx context.Context, name string) error
	// ready queues the nodes whose dependencies are done, for the
	// workers; wg counts the nodes queued or running, until finished.
	ready chan string
	wg    sync.WaitGroup

	mu         sync.Mutex
	pending    map[string]int      // dependencies not yet finished, by node
	dependents map[string][]string // the nodes that depend on each node
	results    map[string]error
	// inherit is what the dependents of a node that did not succeed get:
	// ErrSkipped, or ErrStopped (or ctx's error) when it did not start.
	inherit map[string]error
}

func newWalker(ctx context.Context, stop <-chan struct{}, nodes []string, deps map[string][]string, parallelism int, fn func(ctx context.Context, name string) error) *walker {
	w := &walker{
		ctx: ctx, stop: stop, fn: fn, ready: make(chan string, len(nodes)), // each node is queued once at most
		pending: make(map[string]int, len(nodes)), dependents: make(map[string][]string, len(nodes)),
		results: make(map[string]error), inherit: make(map[string]error),
	}
	in := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		in[n] = true
	}
	for _, n := range nodes {
		for _, d := range deps[n] {
			if in[d] && d != n {
				w.pending[n]++
				w.dependents[d] = append(w.dependents[d], n)
			}
		}
	}
	return w
}

// stopped returns why no new node may start, or nil.
func (w *walker) stopped() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	select {
	case <-w.stop:
		return ErrStopped
	default:
		return nil
	}
}

// start queues node name, for a worker to run once one is free.
func (w *walker) start(name string) {
	w.wg.Add(1)
	w.ready <- name
}

// work runs the queued nodes, one at a time, until the queue is closed;
// once the walk is stopped, it finishes each without running it.
func (w *walker) work() {
	for name := range w.ready {
		if err := w.stopped(); err != nil {
			w.finish(name, err)
		} else {
			w.finish(name, w.fn(w.ctx, name))
		}
		w.wg.Done()
	}
}

// finish records the outcome of node name and starts, or finishes without
// running, each dependent that has no dependency left.
func (w *walker) finish(name string, err error) {
	w.mu.Lock()
	if err != nil {
		w.fail(name, err)
	}
	var ready, skip []string
	for _, d := range w.dependents[name] {
		if err != nil && w.inherit[d] != ErrSkipped {
			w.inherit[d] = w.inherit[name]
		}
		w.pending[d]--
		if w.pending[d] == 0 {
			if w.inherit[d] != nil {
				skip = append(skip, d)
			} else {
				ready = append(ready, d)
			}
		}
	}
	w.mu.Unlock()
	for _, d := range skip {
		w.mu.Lock()
		e := w.inherit[d]
		w.mu.Unlock()
		w.finish(d, e)
	}
	for _, d := range ready {
		w.start(d)
	}
}

// fail records that node name did not succeed, and what its dependents
// inherit from it. w.mu is held.
func (w *walker) fail(name string, err error) {
	w.results[name] = err
	if w.inherit[name] == nil {
		w.inherit[name] = ErrSkipped
	}
	switch {
	case errors.Is(err, ErrStopped):
		// Did not start: neither do its dependents, which are not
		// started rather than skipped, unless another dependency of
		// theirs failed.
		w.inherit[name] = ErrStopped
	case w.ctx.Err() != nil && errors.Is(err, w.ctx.Err()):
		// Did not start, or was cut short, because ctx ended.
		w.inherit[name] = w.ctx.Err()
	}
}
