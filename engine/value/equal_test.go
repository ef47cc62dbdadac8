package value_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
)

func TestSame(t *testing.T) {
	t.Parallel()
	type obj = map[string]any
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"nil", nil, nil, true},
		{"int and float of one value", int64(2), 2.0, true},
		{"int and json number", 3, json.Number("3"), true},
		{"float and int of other values", 2.5, int64(2), false},
		{"strings", "a", "a", true},
		{"string and number", "1", int64(1), false},
		{"nested maps", obj{"a": []any{int64(1), obj{"b": "c"}}}, obj{"a": []any{1.0, obj{"b": "c"}}}, true},
		{"map with a key more", obj{"a": "x"}, obj{"a": "x", "b": nil}, false},
		{"list order", []any{"a", "b"}, []any{"b", "a"}, false},
		{"typed list", []string{"a", "b"}, []any{"a", "b"}, true},
		{"typed map", map[string]string{"k": "v"}, obj{"k": "v"}, true},
		{"attrs", resources.Attrs{"k": 1}, obj{"k": int64(1)}, true},
		{"secrets of one value", value.Secret{Value: "s"}, value.Secret{Value: "s"}, true},
		{"secrets of other values", value.Secret{Value: "s"}, value.Secret{Value: "t"}, false},
		{"a secret and its value", value.Secret{Value: "s"}, "s", false},
		{"a value and its secret", "s", value.Secret{Value: "s"}, false},
		{"unknowns", value.Unknown{}, value.Unknown{}, false},
		{"a value and an unknown", "s", value.Unknown{}, false},
		{"a list and a map", []any{}, obj{}, false},
		{"nil and an empty list", nil, []any{}, false},
	} {
		if got := value.Same(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Same(%#v, %#v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := value.Same(tc.b, tc.a); got != tc.want {
			t.Errorf("%s: Same(%#v, %#v) = %v, want %v (swapped)", tc.name, tc.b, tc.a, got, tc.want)
		}
	}
}

// TestEqualSets checks Equal under a schema with set-like lists (a
// restriction policy's bindings, and the principals of each): order and
// repeats do not matter at either level, the items do, and the values
// compared are left as they were.
func TestEqualSets(t *testing.T) {
	t.Parallel()
	s, ok := schemas.Lookup("datadog:RestrictionPolicy")
	if !ok {
		t.Fatal("no restriction policy schema")
	}
	bindings := s.Root.Properties["bindings"]
	type obj = map[string]any
	b := func(rel string, ps ...any) obj { return obj{"relation": rel, "principals": ps} }
	base := []any{b("viewer", "role:a", "team:b"), b("editor", "user:c")}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		// The same set: bindings and principals shuffled, some repeated,
		// principals as []string now and then, numbers of other types.
		var other []any
		for _, x := range base {
			ps := slices.Clone(x.(obj)["principals"].([]any))
			if rng.IntN(2) == 0 {
				ps = append(ps, ps[rng.IntN(len(ps))])
			}
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			var principals any = ps
			if rng.IntN(3) == 0 {
				strs := make([]string, len(ps))
				for i, p := range ps {
					strs[i] = p.(string)
				}
				principals = strs
			}
			other = append(other, obj{"relation": x.(obj)["relation"], "principals": principals})
		}
		if rng.IntN(2) == 0 {
			other = append(other, other[0])
		}
		rng.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		before := fmt.Sprint(other)
		if !value.Equal(bindings, other, base, value.Sealer{}) {
			t.Fatalf("%v is not equal to %v", other, base)
		}
		if fmt.Sprint(other) != before {
			t.Fatalf("Equal changed its input: %s, now %v", before, other)
		}
	}
	for name, other := range map[string][]any{
		"a principal more":  {b("viewer", "role:a", "team:b", "user:x"), b("editor", "user:c")},
		"a principal moved": {b("viewer", "role:a"), b("editor", "user:c", "team:b")},
		"a binding less":    {b("viewer", "role:a", "team:b")},
		"a relation other":  {b("viewer", "role:a", "team:b"), b("owner", "user:c")},
	} {
		if value.Equal(bindings, other, base, value.Sealer{}) {
			t.Errorf("%s: equal", name)
		}
	}
}
