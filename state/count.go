package state

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// keyCount is the meta value that counts the records: how many there are,
// and the serial they were counted at, 8 bytes big-endian each, then the
// check. Every write that changes the serial writes it, in the same
// transaction as the records it adds or removes; a count whose serial is
// not the state's was left by a reconcile that did not keep it, and is
// not checked (the next write counts the records again).
var keyCount = []byte("count")

// EncodeCount returns the stored form of the record count: count records
// at serial.
func EncodeCount(count, serial int64) []byte {
	raw := binary.BigEndian.AppendUint64(u64(uint64(count)), uint64(serial))
	return seal(bucketMeta, keyCount, raw)
}

// DecodeCount checks value, a stored record count, and returns it and the
// serial it was counted at.
func DecodeCount(value []byte) (count, serial int64, err error) {
	raw, err := openValue(bucketMeta, keyCount, value)
	switch {
	case err != nil:
		return 0, 0, corruptData(err)
	case len(raw) != 16:
		return 0, 0, corruptData(fmt.Errorf("meta %q: %d bytes, want 16", keyCount, len(raw)))
	}
	count, serial = int64(binary.BigEndian.Uint64(raw)), int64(binary.BigEndian.Uint64(raw[8:]))
	if count < 0 || serial < 0 {
		return 0, 0, corruptData(fmt.Errorf("meta %q: bad count %d at serial %d", keyCount, count, serial))
	}
	return count, serial, nil
}

// CountError is the error for a state whose records are not as many as
// its count, kept with every change, says: records were deleted (or
// added) by someone writing to the store directly, outside reconcile.
// Planning without a deleted record would create its object a second
// time. It wraps ErrCorrupt.
type CountError struct {
	// Location names the state.
	Location string
	// Have is the number of records found, Want the count.
	Have, Want int64
	// Missing names the records whose last version says they exist but
	// that are gone, with the serial of that version, sorted by name.
	Missing []MissingRecord
	// Restore says how to restore what is missing, for the backend.
	Restore string
}

// MissingRecord is a record that a CountError finds missing.
type MissingRecord struct {
	Name   string
	Serial int64 // of its last version
}

func (e *CountError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state %s: %v: it holds %s where its record count, kept with every change, says %d", e.Location, ErrCorrupt, plural(e.Have, "record"), e.Want)
	if len(e.Missing) > 0 {
		b.WriteString("; missing: ")
		for i, m := range e.Missing {
			if i == 8 {
				fmt.Fprintf(&b, " and %d more", len(e.Missing)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q (its last version, at serial %d, says it exists)", m.Name, m.Serial)
		}
	}
	b.WriteString(". Records were deleted (or added) outside reconcile, by a hand or tool writing to the store itself; " +
		"planning without a deleted record would create its object a second time, so reconcile uses no such state. ")
	b.WriteString(e.Restore)
	if len(e.Missing) > 0 {
		b.WriteString("; 'reconcile state show NAME --serial N' shows what each missing record held")
	}
	return b.String()
}

func (e *CountError) Unwrap() error { return ErrCorrupt }

// missingTracker finds, from the versions of a state read in order (by
// name, then serial), the records whose last version is not a tombstone,
// that records does not hold.
type missingTracker struct {
	has     func(name string) bool
	missing []MissingRecord
	name    string
	serial  int64
	live    bool
	started bool
}

// add notes the version of name at serial, a tombstone unless live.
func (m *missingTracker) add(name string, serial int64, live bool) {
	if m.started && name != m.name {
		m.flush()
	}
	m.name, m.serial, m.live, m.started = name, serial, live, true
}

func (m *missingTracker) flush() {
	if m.started && m.live && !m.has(m.name) {
		m.missing = append(m.missing, MissingRecord{Name: m.name, Serial: m.serial})
	}
	m.started = false
}

// FindMissing returns the records that versions, the stored versions of a
// state read in order of name then serial (each the name, the serial and
// whether it is a record rather than a tombstone), say exist but that has
// does not find. It is for the backends' CountError.
func FindMissing(has func(name string) bool, versions func(yield func(name string, serial int64, live bool) bool) error) ([]MissingRecord, error) {
	m := &missingTracker{has: has}
	err := versions(func(name string, serial int64, live bool) bool {
		m.add(name, serial, live)
		return true
	})
	m.flush()
	return m.missing, err
}

// plural writes n things, thing being the singular.
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
