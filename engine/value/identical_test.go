package value

import (
	"math/rand/v2"
	"testing"

	"github.com/reconcile-dev/reconcile/schemas"
)

// TestIdenticalIsEqual checks Equal's shortcut: whatever identical calls
// the same is the same in canonical form too, under a plain and a set-like
// schema, and a sealed secret is never plain.
func TestIdenticalIsEqual(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.IntN(8); {
		case n == 0:
			return nil
		case n == 1:
			return []string{"a", "b", "c"}[rng.IntN(3)]
		case n == 2:
			return rng.IntN(2) == 0
		case n == 3:
			return int64(rng.IntN(3))
		case n == 4:
			return float64(rng.IntN(3)) / 2
		case n == 5 && depth > 0:
			var l []any
			for range rng.IntN(3) {
				l = append(l, gen(depth-1))
			}
			return l
		case n == 6 && depth > 0:
			m := map[string]any{}
			for range rng.IntN(3) {
				m[[]string{"x", "y", "z"}[rng.IntN(3)]] = gen(depth - 1)
			}
			return m
		}
		return "s"
	}
	set := &schemas.Prop{Set: true}
	same := 0
	for range 20000 {
		a, b := gen(3), gen(3)
		if rng.IntN(2) == 0 {
			b = a
		}
		if !identical(a, b) {
			continue
		}
		same++
		for _, pr := range []*schemas.Prop{nil, set} {
			if !Same(CompareForm(pr, a), CompareForm(pr, b)) {
				t.Fatalf("identical(%#v, %#v), but their canonical forms differ", a, b)
			}
		}
	}
	if same < 5000 {
		t.Errorf("only %d identical pairs", same)
	}
	sealed := map[string]any{sealKey: "digest"}
	if identical(sealed, map[string]any{sealKey: "digest"}) {
		t.Error("a sealed secret is identical to its copy: Equal must seal the desired value first")
	}
}
