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

// TestViewIsBefore checks ViewIsBefore against building the view, on
// random values of every type: it reports true exactly when UpdatedView
// holds what before holds.
func TestViewIsBefore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	values := []any{"a", "b", int64(1), map[string]any{"x": "1"}, []any{"a"}, value.Secret{Value: "a"}, value.Unknown{}}
	seen := map[bool]int{}
	for _, tok := range schemas.Tokens() {
		s, _ := schemas.Lookup(tok)
		names := append(s.Outputs(), "other")
		// pick draws values from the first known of values (before,
		// from state, holds no unknown), or mostly takes from's.
		pick := func(known int, from map[string]any) map[string]any {
			m := map[string]any{}
			for _, n := range names {
				switch {
				case from != nil && rng.IntN(4) != 0:
					if v, ok := from[n]; ok {
						m[n] = v // mostly the same values, so that true comes up
					}
				case rng.IntN(3) == 0:
					m[n] = values[rng.IntN(known)]
				}
			}
			return m
		}
		for range 3000 {
			before := pick(len(values)-1, nil)
			desired, applied := pick(len(values), before), pick(len(values), before)
			got := eval.ViewIsBefore(s, before, desired, applied)
			want := value.Same(eval.UpdatedView(s, before, desired, applied), before)
			if got != want {
				t.Fatalf("%s: ViewIsBefore(before %v, desired %v, applied %v) = %v, the view says %v", tok, before, desired, applied, got, want)
			}
			seen[got]++
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("the random cases never gave both answers: %v", seen)
	}
}

// SameOutputs agrees with comparing the map Outputs makes.
func TestSameOutputs(t *testing.T) {
	attrs := map[string]any{"id": "x", "state": "ACTIVE", "displayName": "d", "n": int64(1), "tags": map[string]any{"k": "v"}}
	managed := map[string]any{"displayName": "d"}
	for _, recorded := range []map[string]any{
		{"id": "x", "state": "ACTIVE", "n": int64(1), "tags": map[string]any{"k": "v"}},
		{"id": "x", "state": "ACTIVE", "n": 1.0, "tags": map[string]any{"k": "v"}},
		{"id": "x", "state": "ACTIVE", "n": int64(1)},
		{"id": "x", "state": "ACTIVE", "n": int64(1), "tags": map[string]any{"k": "v"}, "displayName": "d"},
		{"id": "x", "state": "FAILED", "n": int64(1), "tags": map[string]any{"k": "v"}},
		{"id": "x", "state": "ACTIVE", "n": int64(1), "tags": map[string]any{"k": "v"}, "extra": nil},
		nil,
	} {
		want := value.Same(recorded, eval.Outputs(attrs, managed))
		if got := eval.SameOutputs(recorded, attrs, managed); got != want {
			t.Errorf("SameOutputs(%v) = %v, want %v", recorded, got, want)
		}
	}
	if !eval.SameOutputs(nil, map[string]any{"displayName": "d"}, managed) {
		t.Error("no outputs recorded, none made: not the same")
	}
}
