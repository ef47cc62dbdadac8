package eval_test

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
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

// upperNormalizer is a driver whose Normalize upper-cases the string
// fields it is given, and records what it was given. Nothing else of it is
// called.
type upperNormalizer struct {
	resources.Driver
	got resources.Attrs
}

func (u *upperNormalizer) Normalize(want resources.Attrs) resources.Attrs {
	u.got = want
	out := resources.Attrs{}
	for k, v := range want {
		if s, ok := v.(string); ok {
			v = strings.ToUpper(s)
		}
		out[k] = v
	}
	return out
}

// TestNormalize checks that Normalize gives the driver the known fields
// without secrets, as they are, keeps the others apart, makes the result
// canonical, and changes neither the desired map nor what it holds.
func TestNormalize(t *testing.T) {
	t.Parallel()
	u := &upperNormalizer{}
	reg := resources.Registry{Drivers: map[string]resources.Driver{"t:T": u}}
	list := []any{"x"}
	for name, tc := range map[string]struct {
		desired, want, given map[string]any
	}{
		"all known": {
			desired: map[string]any{"a": "a", "l": list},
			want:    map[string]any{"a": "A", "l": list},
			given:   map[string]any{"a": "a", "l": list},
		},
		"not canonical": {
			desired: map[string]any{"a": "a", "n": 2},
			want:    map[string]any{"a": "A", "n": int64(2)},
			given:   map[string]any{"a": "a", "n": 2},
		},
		"unknown and secret held apart": {
			desired: map[string]any{"a": "a", "u": value.Unknown{}, "s": value.Secret{Value: "s"}, "l": []any{value.Unknown{}}},
			want:    map[string]any{"a": "A", "u": value.Unknown{}, "s": value.Secret{Value: "s"}, "l": []any{value.Unknown{}}},
			given:   map[string]any{"a": "a"},
		},
	} {
		before := maps.Clone(tc.desired)
		got := eval.Normalize(reg, "t:T", tc.desired)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Normalize = %#v, want %#v", name, got, tc.want)
		}
		if !reflect.DeepEqual(map[string]any(u.got), tc.given) {
			t.Errorf("%s: the driver was given %#v, want %#v", name, u.got, tc.given)
		}
		if !reflect.DeepEqual(tc.desired, before) {
			t.Errorf("%s: desired changed to %#v", name, tc.desired)
		}
	}
	if got := eval.Normalize(reg, "t:Other", map[string]any{"a": "a"}); got["a"] != "a" {
		t.Errorf("a type without a driver: Normalize = %v", got)
	}
}
