package dag

import (
	"context"
	"errors"
	"slices"
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
//
// The calls run on at most parallelism goroutines, each taking the next
// node from a queue of the nodes whose dependencies have all finished.
func WalkStop(ctx context.Context, stop <-chan struct{}, nodes []string, deps map[string][]string, parallelism int, fn func(ctx context.Context, name string) error) map[string]error {
	w := newWalker(ctx, stop, nodes, deps, fn)
	var wg sync.WaitGroup
	for range min(max(parallelism, 1), len(w.names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
	return w.results
}

// walker is the state of one WalkStop. Nodes are numbered by their place
// in the list walked.
type walker struct {
	ctx   context.Context
	stop  <-chan struct{}
	fn    func(ctx context.Context, name string) error
	names []string // by number; a name listed twice is one node

	// dependents of node i are dependents[depStart[i]:depStart[i+1]].
	depStart   []int32
	dependents []int32

	mu      sync.Mutex
	ready   sync.Cond // signalled when the queue grows, broadcast when the walk ends
	queue   []int32   // nodes ready to run, from head on
	head    int
	busy    int     // workers between taking a node and finishing it
	pending []int32 // dependencies not yet finished, by node
	// inherit is what the dependents of a node that did not succeed get:
	// ErrSkipped, or ErrStopped (or ctx's error) when it did not start.
	inherit []error
	results map[string]error
	cascade []finished // finish's work list, kept between calls
}

type finished struct {
	node int32
	err  error
}

func newWalker(ctx context.Context, stop <-chan struct{}, nodes []string, deps map[string][]string, fn func(ctx context.Context, name string) error) *walker {
	w := &walker{ctx: ctx, stop: stop, fn: fn, results: make(map[string]error)}
	w.ready.L = &w.mu
	index := make(map[string]int32, len(nodes))
	w.names = make([]string, 0, len(nodes))
	for _, n := range nodes {
		if _, dup := index[n]; !dup {
			index[n] = int32(len(w.names))
			w.names = append(w.names, n)
		}
	}
	n := len(w.names)
	w.pending = make([]int32, n)
	w.inherit = make([]error, n)
	// Two passes over the edges: count each node's dependents, then place
	// them, in the order of the nodes that depend.
	w.depStart = make([]int32, n+1)
	edges := 0
	for i, name := range w.names {
		for _, d := range deps[name] {
			if j, ok := index[d]; ok && j != int32(i) {
				w.pending[i]++
				w.depStart[j+1]++
				edges++
			}
		}
	}
	for i := range n {
		w.depStart[i+1] += w.depStart[i]
	}
	w.dependents = make([]int32, edges)
	next := slices.Clone(w.depStart[:n])
	for i, name := range w.names {
		for _, d := range deps[name] {
			if j, ok := index[d]; ok && j != int32(i) {
				w.dependents[next[j]] = int32(i)
				next[j]++
			}
		}
	}
	// The roots are all queued before the first starts: from then on,
	// pending is the walk's to change.
	w.queue = make([]int32, 0, n)
	for i := range n {
		if w.pending[i] == 0 {
			w.queue = append(w.queue, int32(i))
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

// work runs the nodes of the queue, one at a time, unless the walk is
// stopped first, until the queue is empty with no node running: then no
// node can become ready any more.
func (w *walker) work() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.head == len(w.queue) {
			if w.busy == 0 {
				w.ready.Broadcast()
				return
			}
			w.ready.Wait()
			continue
		}
		n := w.queue[w.head]
		w.head++
		w.busy++
		w.mu.Unlock()
		err := w.stopped()
		if err == nil {
			err = w.fn(w.ctx, w.names[n])
		}
		w.mu.Lock()
		w.busy--
		w.finish(n, err)
	}
}

// finish records the outcome of node n, queues each dependent that has no
// dependency left, and finishes without running each such dependent that
// inherits a failure, depth first. w.mu is held.
func (w *walker) finish(n int32, err error) {
	w.cascade = append(w.cascade[:0], finished{n, err})
	for len(w.cascade) > 0 {
		f := w.cascade[len(w.cascade)-1]
		w.cascade = w.cascade[:len(w.cascade)-1]
		if f.err != nil {
			w.fail(f.node, f.err)
		}
		mark := len(w.cascade)
		for _, d := range w.dependents[w.depStart[f.node]:w.depStart[f.node+1]] {
			if f.err != nil && w.inherit[d] != ErrSkipped {
				w.inherit[d] = w.inherit[f.node]
			}
			w.pending[d]--
			if w.pending[d] > 0 {
				continue
			}
			if w.inherit[d] != nil {
				w.cascade = append(w.cascade, finished{d, w.inherit[d]})
			} else {
				w.queue = append(w.queue, d)
				w.ready.Signal()
			}
		}
		// Taken from the end: the skipped dependents of f, in order.
		slices.Reverse(w.cascade[mark:])
	}
}

// fail records that node n did not succeed, and what its dependents
// inherit from it. w.mu is held.
func (w *walker) fail(n int32, err error) {
	w.results[w.names[n]] = err
	if w.inherit[n] == nil {
		w.inherit[n] = ErrSkipped
	}
	switch {
	case errors.Is(err, ErrStopped):
		// Did not start: neither do its dependents, which are not
		// started rather than skipped, unless another dependency of
		// theirs failed.
		w.inherit[n] = ErrStopped
	case w.ctx.Err() != nil && errors.Is(err, w.ctx.Err()):
		// Did not start, or was cut short, because ctx ended.
		w.inherit[n] = w.ctx.Err()
	}
}
