package eval

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
)

// TestQuickSize checks the walk that measures a small value as a tree
// against the measure of a value whose parts may be shared: on random
// values, of a few nodes to a few thousand, both give the same size, and
// the quick walk gives up exactly on values of more than quickNodes nodes.
func TestQuickSize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var nodes int
	var gen func(depth, width int) any
	gen = func(depth, width int) any {
		nodes++
		switch n := rng.IntN(8); {
		case depth > 3 || n < 3:
			return strings.Repeat("x", rng.IntN(20))
		case n == 3:
			return int64(n)
		case n == 4:
			return value.Secret{Value: gen(depth+1, width)}
		case n == 5:
			out := make([]any, rng.IntN(width))
			for i := range out {
				out[i] = gen(depth+1, width)
			}
			return out
		}
		out := map[string]any{}
		for i := range rng.IntN(width) {
			out[strings.Repeat("k", i+1)] = gen(depth+1, width)
		}
		return out
	}
	quick, slow := 0, 0
	for i := range 2000 {
		nodes = 0
		v := gen(0, 2+i%40)
		budget := quickNodes
		got, ok := quickSize(v, &budget)
		if ok != (nodes <= quickNodes) {
			t.Fatalf("value of %d nodes: quick walk ok = %v", nodes, ok)
		}
		want := (&Evaluator{}).sizeShared(v)
		if !ok {
			slow++
			continue
		}
		quick++
		if got != want {
			t.Fatalf("value %v: quick size %d, shared size %d", v, got, want)
		}
	}
	if quick < 100 || slow < 100 {
		t.Errorf("only %d values measured quickly and %d not", quick, slow)
	}
}
