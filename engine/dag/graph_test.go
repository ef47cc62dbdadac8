package dag

import (
	"maps"
	"slices"
	"testing"
)

func TestClosure(t *testing.T) {
	t.Parallel()
	g := New(map[string][]string{"a": {}, "b": {"a"}, "c": {"b"}, "d": {"a"}, "e": {}})
	for _, tc := range []struct {
		names []string
		want  []string
	}{
		{[]string{"c"}, []string{"a", "b", "c"}},
		{[]string{"d", "e"}, []string{"a", "d", "e"}},
		{[]string{"a", "missing"}, []string{"a"}},
		{nil, []string{}},
	} {
		if got := slices.Sorted(maps.Keys(g.Closure(tc.names))); !slices.Equal(got, tc.want) {
			t.Errorf("Closure(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

func TestDependents(t *testing.T) {
	t.Parallel()
	g := New(map[string][]string{"a": {}, "b": {"a"}, "c": {"b", "a", "a"}, "d": {"a"}})
	for name, want := range map[string][]string{"a": {"b", "c", "d"}, "b": {"c"}, "c": nil, "missing": nil} {
		if got := g.Dependents(name); !slices.Equal(got, want) {
			t.Errorf("Dependents(%q) = %q, want %q", name, got, want)
		}
	}
}
