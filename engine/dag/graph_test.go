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
