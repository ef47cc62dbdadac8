package state

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// keyCount is the meta value (meta/count) that counts the records: how many there are,
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
	count, serial, err = countOf(value)
	return count, serial, corruptData(err)
}

// countOf is DecodeCount with an error that does not wrap ErrCorrupt.
func countOf(value []byte) (count, serial int64, err error) {
	raw, err := openValue(bucketMeta, keyCount, value)
	switch {
	case err != nil:
		return 0, 0, err
	case len(raw) != 16:
		return 0, 0, fmt.Errorf("meta %q: %d bytes, want 16", keyCount, len(raw))
	}
	count, serial = int64(binary.BigEndian.Uint64(raw)), int64(binary.BigEndian.Uint64(raw[8:]))
	if count < 0 || serial < 0 {
		return 0, 0, fmt.Errorf("meta %q: bad count %d at serial %d", keyCount, count, serial)
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

// checkCount returns a *CountError if have, the number of records in vw,
// is not the record count stored there, when that was counted at the
// state's serial.
func (s *Store) checkCount(vw kv.View, have int64) error {
	if s.absent {
		return nil
	}
	vs, err := vw.GetMany([]string{kvSerial, kvCount})
	if err != nil || vs[1] == nil {
		return err
	}
	serial, err := serialOf(vs[0])
	if err != nil {
		return corruptData(err)
	}
	want, ok, err := metaValues{count: vs[1]}.countAt(serial)
	if err != nil || !ok || want == have {
		return corruptData(err)
	}
	records := map[string]bool{}
	err = vw.Scan(prefixRecords, "", true, func(k string, _ []byte) error {
		records[k[len(prefixRecords):]] = true
		return nil
	})
	if err != nil {
		return err
	}
	missing, err := FindMissing(func(name string) bool { return records[name] },
		func(yield func(name string, serial int64, live bool) bool) error {
			return vw.Scan(prefixVersions, "", false, func(k string, v []byte) error {
				if name, serial, ok := parseVersion(k); ok {
					yield(name, serial, len(v) > checkSize)
				}
				return nil
			})
		})
	if err != nil {
		return err
	}
	restore := "Restore the state file from a backup"
	if !s.local {
		restore = fmt.Sprintf("Restore the deleted records of %s from a backup", s.where)
	}
	return &CountError{Location: s.quoted, Have: have, Want: want, Missing: missing, Restore: restore}
}

// What a writer knows of which records exist, so that it can write the
// record count without reading first: whether each Put adds a record or
// replaces one. It learns it from its own writes and reads (a List, a
// Get, a Delete), and, before a group of writes names a record it knows
// nothing of, from one read for the group. Under its lock no one else
// writes, so what it learnt holds until a write's outcome is unknown
// (refresh then forgets it).

// knowledge is what a writer knows of which records exist.
type knowledge struct {
	known    map[string]bool // name: exists
	complete bool            // known names every record: a name it lacks does not exist
	gen      uint64          // counts the writes noted: a read from before one is not noted
}

// readGen returns what a read started now notes with (see noteRead).
func (s *Store) readGen() uint64 {
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	return s.kn.gen
}

// knows returns whether the record name exists, and whether that is
// known.
func (s *Store) knows(name string) (exists, known bool) {
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	exists, known = s.kn.known[name]
	if !known && s.kn.complete {
		return false, true
	}
	return exists, known
}

// noteRead notes what a read started at gen found of the record name,
// unless this Store wrote since.
func (s *Store) noteRead(gen uint64, name string, exists bool) {
	if s.readOnly {
		return
	}
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	if gen != s.kn.gen {
		return
	}
	if s.kn.known == nil {
		s.kn.known = map[string]bool{}
	}
	s.kn.known[name] = exists
}

// noteList notes that names, read by a read started at gen, are every
// record, unless this Store wrote since or names is nil.
func (s *Store) noteList(gen uint64, names map[string]bool) {
	if s.readOnly || names == nil {
		return
	}
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	if gen == s.kn.gen {
		s.kn = knowledge{known: names, complete: true, gen: gen}
	}
}

// noteWrite notes what a write of this Store left of the records it put
// or deleted; with all, that they are every record.
func (s *Store) noteWrite(exists map[string]bool, all bool) {
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	s.kn.gen++
	if all {
		s.kn.known, s.kn.complete = exists, true
		return
	}
	if len(exists) == 0 {
		return
	}
	if s.kn.known == nil {
		s.kn.known = map[string]bool{}
	}
	for name, ok := range exists {
		s.kn.known[name] = ok
	}
}

// forget drops what s knows of which records exist.
func (s *Store) forget() {
	s.knownMu.Lock()
	s.kn = knowledge{gen: s.kn.gen + 1}
	s.knownMu.Unlock()
}

// learn finds out whether the records of names that s knows nothing of
// exist, in one read. The caller holds txMu.
func (s *Store) learn(names []string) error {
	var ask []string
	for _, name := range names {
		if _, known := s.knows(name); !known && name != "" {
			ask = append(ask, recordKey(name))
		}
	}
	if len(ask) == 0 {
		return nil
	}
	gen := s.readGen()
	return s.read(func(vw kv.View) error {
		vs, err := vw.GetMany(ask)
		for i, v := range vs {
			s.noteRead(gen, ask[i][len(prefixRecords):], v != nil)
		}
		return err
	})
}
