package dag

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// walkRecorder is a walk callback that records which nodes ran, checks
// that each ran after its dependencies, and fails the nodes in fail.
type walkRecorder struct {
	t    *testing.T
	deps map[string][]string
	fail map[string]bool

	mu   sync.Mutex
	done map[string]bool
	ran  []string
}

func newWalkRecorder(t *testing.T, deps map[string][]string, fail ...string) *walkRecorder {
	w := &walkRecorder{t: t, deps: deps, fail: map[string]bool{}, done: map[string]bool{}}
	for _, f := range fail {
		w.fail[f] = true
	}
	return w
}

func (w *walkRecorder) fn(_ context.Context, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.deps[name] {
		if _, declared := w.deps[d]; declared && d != name && !w.done[d] {
			w.t.Errorf("%s ran before its dependency %s finished", name, d)
		}
	}
	w.ran = append(w.ran, name)
	if w.fail[name] {
		return errors.New(name + " failed")
	}
	w.done[name] = true
	return nil
}

func (w *walkRecorder) ranSorted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]string(nil), w.ran...)
	sort.Strings(out)
	return out
}

func TestWalk(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		deps        map[string][]string // every node, with its dependencies
		fail        []string
		parallelism int
		wantRan     []string
		wantErrs    map[string]string // node -> "failed" or "skipped"
	}{
		"chain": {
			deps:    map[string][]string{"a": nil, "b": {"a"}, "c": {"b"}},
			wantRan: []string{"a", "b", "c"},
		},
		"diamond": {
			deps:    map[string][]string{"a": nil, "b": {"a"}, "c": {"a"}, "d": {"b", "c"}},
			wantRan: []string{"a", "b", "c", "d"},
		},
		"parallelism 1": {
			deps:        map[string][]string{"a": nil, "b": {"a"}, "c": {"a"}, "d": {"b", "c"}, "e": nil},
			parallelism: 1,
			wantRan:     []string{"a", "b", "c", "d", "e"},
		},
		"dependencies outside the nodes are ignored": {
			deps:    map[string][]string{"a": {"elsewhere"}, "b": {"a", "elsewhere"}},
			wantRan: []string{"a", "b"},
		},
		"self and repeated dependencies": {
			deps:    map[string][]string{"a": {"a"}, "b": {"a", "a"}},
			wantRan: []string{"a", "b"},
		},
		"failure skips dependents transitively": {
			deps: map[string][]string{
				"a": nil, "b": {"a"}, "c": {"b"}, "d": {"c", "x"},
				"x": nil, "y": {"x"}, "z": {"y"},
			},
			fail:     []string{"b"},
			wantRan:  []string{"a", "b", "x", "y", "z"},
			wantErrs: map[string]string{"b": "failed", "c": "skipped", "d": "skipped"},
		},
		"failure of a root": {
			deps:     map[string][]string{"a": nil, "b": {"a"}, "c": {"a"}, "d": nil, "e": {"d"}},
			fail:     []string{"a"},
			wantRan:  []string{"a", "d", "e"},
			wantErrs: map[string]string{"a": "failed", "b": "skipped", "c": "skipped"},
		},
		"two failures share a dependent": {
			deps:     map[string][]string{"a": nil, "b": nil, "c": {"a", "b"}, "d": nil},
			fail:     []string{"a", "b"},
			wantRan:  []string{"a", "b", "d"},
			wantErrs: map[string]string{"a": "failed", "b": "failed", "c": "skipped"},
		},
		"no nodes": {
			deps: map[string][]string{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var nodes []string
			for n := range tc.deps {
				nodes = append(nodes, n)
			}
			sort.Strings(nodes)
			w := newWalkRecorder(t, tc.deps, tc.fail...)
			par := tc.parallelism
			if par == 0 {
				par = 4
			}
			errs := Walk(t.Context(), nodes, tc.deps, par, w.fn)
			if got := w.ranSorted(); !reflect.DeepEqual(got, tc.wantRan) && (len(got) != 0 || len(tc.wantRan) != 0) {
				t.Errorf("ran %v, want %v", got, tc.wantRan)
			}
			got := map[string]string{}
			for n, err := range errs {
				switch {
				case errors.Is(err, ErrSkipped):
					got[n] = "skipped"
				case err != nil:
					got[n] = "failed"
				}
			}
			want := tc.wantErrs
			if want == nil {
				want = map[string]string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors = %v, want %v", got, want)
			}
		})
	}
}

// TestWalkParallelism checks that no more than the given number of nodes
// run at once, and that that many do run at once when the graph allows.
func TestWalkParallelism(t *testing.T) {
	t.Parallel()
	for _, par := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(par), func(t *testing.T) {
			t.Parallel()
			const n = 64
			var nodes []string
			deps := map[string][]string{}
			for i := range n {
				name := fmt.Sprintf("n%02d", i)
				nodes = append(nodes, name)
				if i >= n/2 { // the second half depends on one node of the first
					deps[name] = []string{fmt.Sprintf("n%02d", i-n/2)}
				}
			}
			var running, peak, calls atomic.Int64
			full := make(chan struct{})
			var once sync.Once
			errs := Walk(t.Context(), nodes, deps, par, func(ctx context.Context, name string) error {
				defer running.Add(-1)
				cur := running.Add(1)
				calls.Add(1)
				for {
					p := peak.Load()
					if cur <= p || peak.CompareAndSwap(p, cur) {
						break
					}
				}
				if cur == int64(par) {
					once.Do(func() { close(full) })
				}
				// The first nodes wait until the walker has par of them
				// running, which shows it does allow that many.
				select {
				case <-full:
				case <-time.After(10 * time.Second):
					return fmt.Errorf("only %d nodes ran at once, want %d", running.Load(), par)
				}
				return nil
			})
			for name, err := range errs {
				t.Errorf("%s: %v", name, err)
			}
			if got := peak.Load(); got != int64(par) {
				t.Errorf("at most %d nodes ran at once, want exactly %d", got, par)
			}
			if got := calls.Load(); got != n {
				t.Errorf("%d nodes ran, want %d", got, n)
			}
		})
	}
}

// TestWalkCancel checks that nodes not yet started when the context ends
// get its error and do not run.
func TestWalkCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	nodes := []string{"a", "b", "c", "d"}
	deps := map[string][]string{"b": {"a"}, "c": {"b"}}
	var ran []string
	var mu sync.Mutex
	errs := Walk(ctx, nodes, deps, 1, func(ctx context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, name)
		if name == "a" {
			cancel()
		}
		return nil
	})
	if !errors.Is(errs["b"], context.Canceled) && !errors.Is(errs["b"], ErrSkipped) {
		t.Errorf("b: %v, want context.Canceled", errs["b"])
	}
	if !errors.Is(errs["c"], ErrSkipped) && !errors.Is(errs["c"], context.Canceled) {
		t.Errorf("c: %v, want it skipped", errs["c"])
	}
	for _, n := range ran {
		if n == "b" || n == "c" {
			t.Errorf("%s ran after the context was cancelled", n)
		}
	}
}

// TestWalkManyIndependent runs a wide graph: every node runs exactly once.
func TestWalkManyIndependent(t *testing.T) {
	t.Parallel()
	const n = 2000
	var nodes []string
	deps := map[string][]string{}
	for i := range n {
		nodes = append(nodes, fmt.Sprint(i))
		if i%10 != 0 {
			deps[fmt.Sprint(i)] = []string{fmt.Sprint(i - 1)}
		}
	}
	counts := make([]atomic.Int32, n)
	errs := Walk(t.Context(), nodes, deps, 10, func(_ context.Context, name string) error {
		var i int
		fmt.Sscan(name, &i)
		counts[i].Add(1)
		if i%10 != 0 && counts[i-1].Load() != 1 {
			return fmt.Errorf("%d ran before %d", i, i-1)
		}
		return nil
	})
	if len(errs) != 0 {
		t.Errorf("errors: %v", errs)
	}
	for i := range counts {
		if c := counts[i].Load(); c != 1 {
			t.Errorf("node %d ran %d times, want once", i, c)
		}
	}
}

// gatedDeps is a graph for the stop and cancel tests: roots a and s run
// together (parallelism 2); s fails; a ends the walk (closes stop or
// cancels ctx) once s has been called, then succeeds. Every other node
// depends on a, on s, or on both through b.
var gatedDeps = map[string][]string{
	"b": {"a"},      // not started: the walk ended before
	"c": {"b"},      // inherits from b
	"w": {"a"},      // not started either
	"t": {"s", "b"}, // a failure and a node not started: skipped
	"v": {"s"},      // skipped
}

var gatedNodes = []string{"a", "b", "c", "s", "t", "v", "w"}

func TestWalkStop(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	sCalled := make(chan struct{})
	errS := errors.New("s failed")
	var mu sync.Mutex
	var ran []string
	errs := WalkStop(t.Context(), stop, gatedNodes, gatedDeps, 2, func(ctx context.Context, name string) error {
		mu.Lock()
		ran = append(ran, name)
		mu.Unlock()
		switch name {
		case "a":
			<-sCalled
			close(stop)
			return nil
		case "s":
			close(sCalled)
			return errS
		}
		return nil
	})
	sort.Strings(ran)
	if !reflect.DeepEqual(ran, []string{"a", "s"}) {
		t.Errorf("ran %v, want [a s]", ran)
	}
	want := map[string]error{"s": errS, "b": ErrStopped, "c": ErrStopped, "w": ErrStopped, "t": ErrSkipped, "v": ErrSkipped}
	if len(errs) != len(want) {
		t.Errorf("errors %v, want %v", errs, want)
	}
	for n, err := range want {
		if errs[n] != err {
			t.Errorf("%s: %v, want %v", n, errs[n], err)
		}
	}
}

func TestWalkCancelInherited(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sCalled, kCalled := make(chan struct{}), make(chan struct{})
	errS := errors.New("s failed")
	nodes := append([]string{"k", "k2"}, gatedNodes...)
	deps := map[string][]string{"k2": {"k"}}
	for n, d := range gatedDeps {
		deps[n] = d
	}
	var cut error
	errs := Walk(ctx, nodes, deps, 3, func(ctx context.Context, name string) error {
		switch name {
		case "a":
			<-sCalled
			<-kCalled
			cancel()
			return nil
		case "s":
			close(sCalled)
			return errS
		case "k": // cut short by the end of ctx
			close(kCalled)
			<-ctx.Done()
			cut = fmt.Errorf("k: %w", ctx.Err())
			return cut
		}
		t.Errorf("%s ran", name)
		return nil
	})
	want := map[string]error{"s": errS, "k": cut, "k2": context.Canceled, "b": context.Canceled, "c": context.Canceled,
		"w": context.Canceled, "t": ErrSkipped, "v": ErrSkipped}
	if len(errs) != len(want) {
		t.Errorf("errors %v, want %v", errs, want)
	}
	for n, err := range want {
		if errs[n] != err {
			t.Errorf("%s: %v, want %v", n, errs[n], err)
		}
	}
}

// TestWalkStoppedBefore checks that a walk whose stop channel is closed
// before it starts calls nothing: roots and their dependents alike get
// ErrStopped.
func TestWalkStoppedBefore(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	close(stop)
	errs := WalkStop(t.Context(), stop, gatedNodes, gatedDeps, 4, func(context.Context, string) error {
		t.Error("a node ran")
		return nil
	})
	for _, n := range gatedNodes {
		if errs[n] != ErrStopped {
			t.Errorf("%s: %v, want ErrStopped", n, errs[n])
		}
	}
}

// TestWalkLongSkippedChain fails the root of a long chain: every other
// node is skipped, none runs.
func TestWalkLongSkippedChain(t *testing.T) {
	t.Parallel()
	const n = 20000
	nodes := make([]string, n)
	deps := map[string][]string{}
	for i := range n {
		nodes[i] = fmt.Sprint(i)
		if i > 0 {
			deps[nodes[i]] = []string{nodes[i-1]}
		}
	}
	errRoot := errors.New("root failed")
	errs := Walk(t.Context(), nodes, deps, 4, func(_ context.Context, name string) error {
		if name != "0" {
			t.Errorf("%s ran", name)
		}
		return errRoot
	})
	if len(errs) != n || errs["0"] != errRoot {
		t.Fatalf("%d errors, root: %v", len(errs), errs["0"])
	}
	for _, name := range nodes[1:] {
		if errs[name] != ErrSkipped {
			t.Fatalf("%s: %v, want ErrSkipped", name, errs[name])
		}
	}
}

// TestWalkCycle checks that nodes on a cycle, and what depends on them,
// never run and are not in the result, while the rest of the walk ends.
func TestWalkCycle(t *testing.T) {
	t.Parallel()
	deps := map[string][]string{"x": {"y"}, "y": {"x"}, "z": {"x"}, "b": {"a"}}
	var ran []string
	var mu sync.Mutex
	errs := Walk(t.Context(), []string{"a", "b", "x", "y", "z"}, deps, 2, func(_ context.Context, name string) error {
		mu.Lock()
		ran = append(ran, name)
		mu.Unlock()
		return nil
	})
	sort.Strings(ran)
	if !reflect.DeepEqual(ran, []string{"a", "b"}) || len(errs) != 0 {
		t.Errorf("ran %v, errors %v; want [a b] and none", ran, errs)
	}
}
