package specs

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLineIndex checks the index that positions read lines from against
// splitLines, on texts made of every YAML line break, their parts and
// other characters.
func TestLineIndex(t *testing.T) {
	t.Parallel()
	for src, want := range map[string][]string{
		"a\r\nb\rc\nd\u0085e\u2028f\u2029g": {"a", "b", "c", "d", "e", "f", "g"},
		"\xc2x\xe2\x80x\r":                  {"\xc2x\xe2\x80x", ""},
		"":                                  {""},
	} {
		if got := splitLines(src); !slices.Equal(got, want) {
			t.Errorf("splitLines(%q) = %q, want %q", src, got, want)
		}
	}
	pieces := []string{"a", "key: v", "é", " ", "\r", "\n", "\r\n", "\u0085", "\u2028", "\u2029", "\xc2", "\xe2\x80", "\xe2", "\ufeff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		src := b.String()
		want := splitLines(src)
		ix := indexLines([]byte(src))
		if ix.count() != len(want) {
			t.Fatalf("trial %d, %q: %d lines, want %d", trial, src, ix.count(), len(want))
		}
		for n := 1; n <= len(want); n++ {
			if got := ix.line(n); got != want[n-1] {
				t.Fatalf("trial %d, %q: line %d is %q, want %q", trial, src, n, got, want[n-1])
			}
		}
	}
	if n := (lineIndex{}).count(); n != 0 {
		t.Errorf("no file has %d lines", n)
	}
}
