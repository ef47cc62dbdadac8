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
	// Each slot holds a string boxed, so that Boxed can hand out the same
	// interface value (boxing a string allocates).
	slots [slots]any
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
	slot := &t.slots[maphash.Bytes(t.seed, b)&(slots-1)]
	if s, ok := (*slot).(string); ok && s == string(b) {
		return s
	}
	s := string(b)
	*slot = s
	return s
}

// String returns s, or the string equal to it that t holds, so that s's
// own memory can be let go.
func (t *Table) String(s string) string {
	return t.Boxed(s).(string)
}

// Boxed returns s as an interface value, the one made before for an equal
// string when t still holds it.
func (t *Table) Boxed(s string) any {
	if t == nil || len(s) == 0 || len(s) > maxLen {
		return s
	}
	slot := &t.slots[maphash.String(t.seed, s)&(slots-1)]
	if old, ok := (*slot).(string); ok && old == s {
		return *slot
	}
	*slot = s
	return *slot
}
