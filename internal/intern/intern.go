// Package intern makes one string of equal byte sequences that a decoder
// reads many times over. The records of a state, or the resources of a
// large spec, spell the same few keys again and again, and many of their
// values recur (a type, a region, a principal); an id recurs in the fields
// that echo it. Made through a Table, equal strings share their memory and
// are allocated once.
package intern

import "hash/maphash"

// A Table remembers the strings it made last, in a fixed number of slots
// by their hash, and returns the one it has when asked for the same bytes
// again. Its size never grows: a string that no longer recurs is in time
// displaced by others. It is not safe for concurrent use: give each
// goroutine its own.
type Table struct {
	seed maphash.Seed
	strs [slots]string
	// boxed holds strs[i] as an interface value once Boxed has handed it
	// out (boxing a string allocates), nil until then.
	boxed [slots]any
}

// slots is the size of a Table; maxLen the length beyond which strings
// are made apart (long strings seldom recur, and hashing them costs).
const (
	slots  = 1 << 10
	maxLen = 256
)

// New returns an empty Table.
func New() *Table { return &Table{seed: maphash.MakeSeed()} }

// Bytes returns b as a string: the one made before for the same bytes
// when t still holds it. A nil Table makes every string apart.
func (t *Table) Bytes(b []byte) string {
	if t == nil || len(b) == 0 || len(b) > maxLen {
		return string(b)
	}
	i := maphash.Bytes(t.seed, b) & (slots - 1)
	if t.strs[i] != string(b) {
		t.strs[i], t.boxed[i] = string(b), nil
	}
	return t.strs[i]
}

// String returns s, or the string equal to it that t holds, so that s's
// own memory can be let go.
func (t *Table) String(s string) string {
	if i, ok := t.index(s); ok {
		return t.strs[i]
	}
	return s
}

// Boxed returns s as an interface value: the one handed out before for an
// equal string when t still holds it.
func (t *Table) Boxed(s string) any {
	i, ok := t.index(s)
	if !ok {
		return s
	}
	if t.boxed[i] == nil {
		t.boxed[i] = t.strs[i]
	}
	return t.boxed[i]
}

// index returns the slot that holds s, having put s there if it held
// another string; false for a string t makes apart.
func (t *Table) index(s string) (uint64, bool) {
	if t == nil || len(s) == 0 || len(s) > maxLen {
		return 0, false
	}
	i := maphash.String(t.seed, s) & (slots - 1)
	if t.strs[i] != s {
		t.strs[i], t.boxed[i] = s, nil
	}
	return i, true
}
