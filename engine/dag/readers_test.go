package dag

import (
	"slices"
	"testing"
)

// TestReaders lets go of a value once its last reader is done, of a value
// nothing reads as soon as its node is, and never of a kept one or of one
// whose reader did not finish.
func TestReaders(t *testing.T) {
	// a <- b, a <- c, b <- d; e reads nothing and nothing reads it; an
	// output reads d; f reads e but never finishes.
	deps := map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"b"}, "f": {"e"}}
	r := CountReaders([]string{"a", "b", "c", "d", "e", "f"}, deps, []string{"d"})
	var gone []string
	done := func(node string) []string {
		gone = gone[:0]
		r.Done(node, deps[node], func(name string) { gone = append(gone, name) })
		return slices.Sorted(slices.Values(gone))
	}
	for _, step := range []struct {
		node string
		want []string
	}{
		{"a", nil},                // b and c read it
		{"b", nil},                // c still reads a; d reads b
		{"e", nil},                // f reads it, and never finishes
		{"c", []string{"a", "c"}}, // a's last reader; nothing reads c
		{"d", []string{"b"}},      // d itself is kept
	} {
		if got := done(step.node); !slices.Equal(got, step.want) {
			t.Errorf("after %s: let go of %v, want %v", step.node, got, step.want)
		}
	}
}
