package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Snapshot is the whole content of one state, as Dump returns it and Load
// writes it: enough to copy a state between backends without loss. It
// holds the secret key: never print Key or log a Snapshot's fields; String
// and GoString leave the key out.
type Snapshot struct {
	// Meta is the lineage, serial and format version of the state.
	Meta Meta
	// Key is the state's 32-byte secret key.
	Key []byte
	// Records are the current records, sorted by name.
	Records []Record
	// Versions are every version and tombstone, sorted by name, then by
	// serial.
	Versions []VersionEntry
	// History is every history entry, in the order History returns them.
	History []HistoryEntry
	// Intents are the recorded intents, sorted by name.
	Intents []Intent
	// Outputs are the stack outputs last recorded; nil when none were.
	Outputs *Outputs
}

// VersionEntry is one stored version of a record: the record as written at
// Serial, or, if Deleted, a tombstone that says it was deleted (or renamed
// away) at Serial.
type VersionEntry struct {
	Name    string
	Serial  int64
	Deleted bool
	// Record is the version; the zero Record for a tombstone.
	Record Record
}

// String describes s without its secret key, e.g. `lineage 5f0c…, serial
// 12: 4 records, 17 versions, 3 history entries, 0 intents`.
func (s Snapshot) String() string {
	return fmt.Sprintf("lineage %s, serial %d: %d records, %d versions, %d history entries, %d intents",
		s.Meta.Lineage, s.Meta.Serial, len(s.Records), len(s.Versions), len(s.History), len(s.Intents))
}

// GoString is String, so that %#v does not show the key either.
func (s Snapshot) GoString() string { return "state.Snapshot{" + s.String() + "}" }

// Equal reports whether s and o hold the same state: the same lineage,
// serial, key and entries.
func (s Snapshot) Equal(o Snapshot) bool {
	a, errA := s.canonical()
	b, errB := o.canonical()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// canonical encodes s deterministically, for comparisons.
func (s Snapshot) canonical() ([]byte, error) {
	type plain Snapshot // without the String method
	return json.Marshal(plain(s))
}

// entries returns the stored form of every entry of s but its meta values,
// each once, for a subset test.
func (s Snapshot) entries() (map[string]bool, error) {
	set := map[string]bool{}
	add := func(kind string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		set[kind+string(data)] = true
		return nil
	}
	for _, r := range s.Records {
		if err := add("r", r); err != nil {
			return nil, err
		}
	}
	for _, v := range s.Versions {
		if err := add("v", v); err != nil {
			return nil, err
		}
	}
	for _, h := range s.History {
		if err := add("h", h); err != nil {
			return nil, err
		}
	}
	for _, in := range s.Intents {
		if err := add("i", in); err != nil {
			return nil, err
		}
	}
	if s.Outputs != nil {
		if err := add("o", s.Outputs); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// Validate checks that s can be loaded: a lineage, a key of 32 bytes, names
// that CheckName accepts, sorted records and versions, and no record or
// version beyond its serial.
func (s Snapshot) Validate() error {
	switch {
	case s.Meta.Lineage == "":
		return fmt.Errorf("snapshot has no lineage")
	case len(s.Key) != secretKeySize:
		return fmt.Errorf("snapshot key is %d bytes, want %d", len(s.Key), secretKeySize)
	case s.Meta.Serial < 0:
		return fmt.Errorf("snapshot serial %d is negative", s.Meta.Serial)
	}
	for i, r := range s.Records {
		if err := checkName(r.Name); err != nil {
			return fmt.Errorf("snapshot record %q: %w", r.Name, err)
		}
		if i > 0 && s.Records[i-1].Name >= r.Name {
			return fmt.Errorf("snapshot records not sorted by name at %q", r.Name)
		}
		if r.Serial > s.Meta.Serial {
			return fmt.Errorf("snapshot record %q at serial %d, beyond the state's %d", r.Name, r.Serial, s.Meta.Serial)
		}
	}
	for i, v := range s.Versions {
		if err := checkName(v.Name); err != nil {
			return fmt.Errorf("snapshot version %q: %w", v.Name, err)
		}
		if i > 0 {
			p := s.Versions[i-1]
			if p.Name > v.Name || p.Name == v.Name && p.Serial >= v.Serial {
				return fmt.Errorf("snapshot versions not sorted at %q serial %d", v.Name, v.Serial)
			}
		}
		if v.Serial > s.Meta.Serial || v.Serial < 0 {
			return fmt.Errorf("snapshot version of %q at serial %d, out of the state's 0..%d", v.Name, v.Serial, s.Meta.Serial)
		}
		if !v.Deleted && (v.Record.Name != v.Name || v.Record.Serial != v.Serial) {
			return fmt.Errorf("snapshot version of %q at serial %d holds record %q at serial %d", v.Name, v.Serial, v.Record.Name, v.Record.Serial)
		}
	}
	for _, in := range s.Intents {
		if err := checkName(in.Name); err != nil {
			return fmt.Errorf("snapshot intent %q: %w", in.Name, err)
		}
	}
	if !slices.IsSortedFunc(s.Intents, func(a, b Intent) int { return cmpString(a.Name, b.Name) }) {
		return fmt.Errorf("snapshot intents not sorted by name")
	}
	if s.Outputs != nil && (s.Outputs.Serial < 0 || s.Outputs.Serial > s.Meta.Serial) {
		return fmt.Errorf("snapshot outputs at serial %d, out of the state's 0..%d", s.Outputs.Serial, s.Meta.Serial)
	}
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CheckLoad decides, for every backend alike, what Load of snap does to a
// state that holds cur (as its Dump returned it). It returns false and nil
// when cur is already an identical copy of snap: Load writes nothing. It
// returns true and nil when cur has serial 0 and holds nothing that snap
// does not hold (a new state, or one that a Load of snap was interrupted
// in): Load writes snap. Otherwise it returns an error wrapping
// ErrNotEmpty, and Load writes nothing. It returns an error if snap fails
// Validate.
func CheckLoad(cur, snap Snapshot) (write bool, err error) {
	if err := snap.Validate(); err != nil {
		return false, err
	}
	if cur.Equal(snap) {
		return false, nil
	}
	if cur.Meta.Serial == 0 {
		have, err := cur.entries()
		if err != nil {
			return false, err
		}
		want, err := snap.entries()
		if err != nil {
			return false, err
		}
		extra := false
		for e := range have {
			if !want[e] {
				extra = true
				break
			}
		}
		if !extra {
			return true, nil
		}
	}
	if cur.Meta.Lineage == snap.Meta.Lineage {
		return false, fmt.Errorf("%w: it holds lineage %s at serial %d, the snapshot serial %d of the same lineage; it is not a copy of it",
			ErrNotEmpty, cur.Meta.Lineage, cur.Meta.Serial, snap.Meta.Serial)
	}
	return false, fmt.Errorf("%w: it holds lineage %s at serial %d, the snapshot lineage %s", ErrNotEmpty, cur.Meta.Lineage, cur.Meta.Serial, snap.Meta.Lineage)
}
