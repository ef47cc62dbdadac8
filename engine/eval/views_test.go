package eval_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"reconcile/engine/eval"
	"reconcile/engine/value"
	"reconcile/schemas"
)

// TestDiffManaged checks DiffManaged against DiffInputs of ManagedInputs
// on random inputs of every type: with no ignoreChanges they name the same
// fields.
func TestDiffManaged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	sl := value.Sealer{Key: []byte("k"), Name: "r"}
	values := []any{nil, "a", "b", int64(1), int64(2), map[string]any{"x": "1"}, map[string]any{"x": "2"}, []any{"a"}, value.Secret{Value: "a"}}
	for _, tok := range schemas.Tokens() {
		s, _ := schemas.Lookup(tok)
		names := append(s.Outputs(), "other")
		pick := func() map[string]any {
			if rng.IntN(8) == 0 {
				return nil
			}
			m := map[string]any{}
			for _, n := range names {
				if rng.IntN(2) == 0 {
					m[n] = values[rng.IntN(len(values))]
				}
			}
			return m
		}
		for range 2000 {
			attrs, desired, applied := pick(), pick(), pick()
			if desired == nil {
				desired = map[string]any{}
			}
			want := eval.DiffInputs(s, eval.ManagedInputs(s, attrs, desired, applied), desired, nil, sl)
			if got := eval.DiffManaged(s, attrs, desired, applied, sl); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: attrs %v, desired %v, applied %v: DiffManaged %v, want %v", tok, attrs, desired, applied, got, want)
			}
		}
	}
}
