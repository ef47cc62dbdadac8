package state

import (
	"fmt"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Dump returns the whole state, read in one view: meta, secret key,
// records, every version and tombstone, history, intents and outputs. It
// returns an error wrapping ErrCorrupt if any value fails its check or
// cannot be decoded, or the records are not as many as their count says.
// The Snapshot holds the secret key: see Snapshot.
func (s *Store) Dump() (Snapshot, error) {
	if s.absent {
		return Snapshot{Meta: Meta{FormatVersion: FormatVersion}}, nil
	}
	var snap Snapshot
	err := s.read(func(vw kv.View) error {
		var err error
		snap, err = s.dumpView(vw)
		return err
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("dump state %s: %w", s.quoted, err)
	}
	s.release()
	return snap, nil
}

// dumpView reads the whole state in vw; with history, also the keys of
// its history entries.
func (s *Store) dumpView(vw kv.View) (Snapshot, error) {
	var snap Snapshot
	mv, err := readMetaValues(vw)
	if err != nil {
		return snap, err
	}
	if snap.Meta, err = s.metaOf(mv); err != nil {
		return Snapshot{}, err
	}
	if snap.Key, err = secretKeyOf(mv.key); err != nil {
		return Snapshot{}, corruptData(err)
	}
	err = vw.Scan(prefixRecords, "", false, func(k string, v []byte) error {
		r, err := DecodeRecord(k[len(prefixRecords):], v)
		snap.Records = append(snap.Records, r)
		return err
	})
	if err == nil {
		err = s.checkCount(vw, int64(len(snap.Records)))
	}
	if err != nil {
		return Snapshot{}, err
	}
	err = vw.Scan(prefixVersions, "", false, func(k string, v []byte) error {
		name, serial, ok := parseVersion(k)
		if !ok {
			return corruptData(fmt.Errorf("versions key %q: not a versions key", k[len(prefixVersions):]))
		}
		r, ok, err := DecodeVersion(name, serial, v)
		snap.Versions = append(snap.Versions, VersionEntry{Name: name, Serial: serial, Deleted: !ok, Record: r})
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	err = vw.Scan(prefixHistory, "", false, func(k string, v []byte) error {
		serial, seq, ok := parseHistory(k)
		if !ok {
			return corruptData(fmt.Errorf("history key %q: not a history key", k[len(prefixHistory):]))
		}
		h, err := DecodeHistory(serial, seq, v)
		snap.History = append(snap.History, h)
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	err = vw.Scan(prefixIntents, "", false, func(k string, v []byte) error {
		in, err := DecodeIntent(k[len(prefixIntents):], v)
		snap.Intents = append(snap.Intents, in)
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	v, err := vw.Get(kvOutputs)
	if err != nil || v == nil {
		return snap, err
	}
	o, err := DecodeOutputs(v)
	if err != nil {
		return Snapshot{}, err
	}
	snap.Outputs = &o
	return snap, nil
}

// Load writes snap, a Snapshot of this or another backend, into the state,
// so that the state becomes a copy of it: the same lineage, serial, secret
// key, records, versions, tombstones, history, intents and outputs.
// History entries are numbered anew, in order.
//
// Load writes only into a state that holds nothing but what snap holds, at
// serial 0: a state just created to receive it (its own lineage and key are
// replaced). Load of a snapshot into an identical copy of it does nothing
// and succeeds, so a copy can be retried. Into any other state, Load writes
// nothing and returns an error wrapping ErrNotEmpty; see CheckLoad. It
// returns an error wrapping ErrReadOnly for a read-only Store.
//
// A snapshot that one write of the backend cannot hold (on a local file,
// every one can) is written in several: the first marks the state
// incomplete (as Open does a state it creates with Options.Copy), and the
// last writes the meta values (lineage, key, serial, record count) and
// removes the mark, all at once. Until then every Open but one for the
// copy refuses the state, and a Load of the same snapshot completes it.
// Options.OnLoad is called after each write.
func (s *Store) Load(snap Snapshot) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("load state %s: %w", s.quoted, err)
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if err := s.load(snap); err != nil {
		return fmt.Errorf("load state %s: %w", s.quoted, err)
	}
	return nil
}

// load does the work of Load under txMu.
func (s *Store) load(snap Snapshot) error {
	if err := s.prepare(); err != nil {
		return err
	}
	var (
		cur     Snapshot
		history []string // the keys of the history entries stored
	)
	err := s.read(func(vw kv.View) error {
		var err error
		if cur, err = s.dumpView(vw); err != nil {
			return err
		}
		return vw.Scan(prefixHistory, "", true, func(k string, _ []byte) error {
			history = append(history, k)
			return nil
		})
	})
	if err != nil {
		return err
	}
	write, err := CheckLoad(cur, snap)
	if err != nil {
		return err
	}
	if !write {
		// An identical copy: complete, if it is still marked so.
		t := &txn{serial: s.serial}
		t.del(kvIncomplete)
		return s.commit(t)
	}
	// The first write marks the state incomplete, as Open does a state
	// it creates for a copy, and the last removes the mark. In one write,
	// the copy needs no mark: the put is taken out below.
	mark := CopyMark{}
	if s.copying != nil {
		mark = *s.copying
	}
	markValue := EncodeCopyMark(mark)
	var chunks []*txn
	t := &txn{serial: s.serial}
	t.put(kvIncomplete, markValue)
	// Nor is the record count right until the last.
	t.del(kvCount)
	// add adds the put (or the delete, for a nil value) at key to the
	// write being built, or to a new one if it would not fit.
	var add func(key string, value []byte) error
	add = func(key string, value []byte) error {
		ops, size := len(t.Ops), t.size
		if value == nil {
			t.del(key)
		} else {
			t.put(key, value)
		}
		if s.fits(t) {
			return nil
		}
		t.Ops, t.size = t.Ops[:ops], size
		if ops == 0 {
			return s.tooLarge(t)
		}
		chunks = append(chunks, t)
		t = &txn{serial: s.serial}
		return add(key, value)
	}
	keep := map[string]bool{}
	for i, h := range snap.History {
		keep[historyKeyOf(h.Serial, uint64(i+1))] = true
	}
	for _, k := range history {
		// A partial Load of the same snapshot may have left entries, as
		// the snapshot numbers them: only those.
		if !keep[k] {
			if err := add(k, nil); err != nil {
				return err
			}
		}
	}
	for _, r := range snap.Records {
		v, err := EncodeRecord(r)
		if err == nil {
			err = add(recordKey(r.Name), v)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range snap.Versions {
		v := EncodeTombstone(e.Name, e.Serial)
		if !e.Deleted {
			if v, err = EncodeVersion(e.Record); err != nil {
				return err
			}
		}
		if err := add(versionKeyOf(e.Name, e.Serial), v); err != nil {
			return err
		}
	}
	for i, h := range snap.History {
		seq := uint64(i + 1)
		v, err := EncodeHistory(h, seq)
		if err == nil {
			err = add(historyKeyOf(h.Serial, seq), v)
		}
		if err != nil {
			return err
		}
	}
	for _, in := range snap.Intents {
		v, err := EncodeIntent(in)
		if err == nil {
			err = add(intentKey(in.Name), v)
		}
		if err != nil {
			return err
		}
	}
	if snap.Outputs != nil {
		v, err := EncodeOutputs(*snap.Outputs)
		if err == nil {
			err = add(kvOutputs, v)
		}
		if err != nil {
			return err
		}
	}
	// The meta values and the serial last, in the last write, with the
	// end of the mark.
	last := func(t *txn) {
		t.put(kvLineage, EncodeLineage(snap.Meta.Lineage))
		t.put(kvSecret, EncodeSecretKey(snap.Key))
		t.del(kvIncomplete)
	}
	ops, size := len(t.Ops), t.size
	if last(t); !s.fits(t) {
		t.Ops, t.size = t.Ops[:ops], size
		chunks = append(chunks, t)
		t = &txn{serial: s.serial}
		last(t)
	}
	t.serial = snap.Meta.Serial
	t.count, t.countSet = int64(len(snap.Records)), true
	t.exists, t.all = make(map[string]bool, len(snap.Records)), true
	for _, r := range snap.Records {
		t.exists[r.Name] = true
	}
	chunks = append(chunks, t)
	if len(chunks) == 1 {
		// The mark and the count's delete, taken out again.
		t.Ops = t.Ops[2:]
		t.size -= len(kvIncomplete) + len(markValue) + len(kvCount) + 2*kv.OpOverhead
	}
	for i, t := range chunks {
		if err := s.commit(t); err != nil {
			return err
		}
		if s.onLoad != nil {
			s.onLoad(i+1, len(chunks))
		}
	}
	s.historySeq, s.seqKnown = uint64(len(snap.History)), true
	return nil
}
