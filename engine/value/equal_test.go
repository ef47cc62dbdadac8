package value_test

import (
	"encoding/json"
	"testing"

	"reconcile/engine/value"
	"reconcile/resources"
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
