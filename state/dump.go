package state

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Dump returns the whole state, read in one transaction: meta, secret key,
// records, every version and tombstone, history, intents and outputs. It returns an
// error wrapping ErrCorrupt if any value fails its check or cannot be
// decoded. The Snapshot holds the secret key: see Snapshot.
func (s *Store) Dump() (Snapshot, error) {
	var snap Snapshot
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		snap, err = dumpTx(tx)
		release(tx)
		return err
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("dump state %q: %w", s.path, err)
	}
	return snap, nil
}

// dumpTx reads the whole state in tx.
func dumpTx(tx *bolt.Tx) (Snapshot, error) {
	var snap Snapshot
	meta := tx.Bucket(bucketMeta)
	m, err := readMeta(meta)
	if err != nil {
		return Snapshot{}, corruptData(err)
	}
	key, err := readSecretKey(meta)
	if err != nil {
		return Snapshot{}, corruptData(err)
	}
	snap.Meta, snap.Key = m, key
	err = tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		r, err := readValue(bucketRecords, k, v, decodeRecord)
		snap.Records = append(snap.Records, r)
		return corruptData(err)
	})
	if err != nil {
		return Snapshot{}, err
	}
	err = tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
		n := len(k) - 9
		if n < 0 || k[n] != 0 {
			return corruptData(fmt.Errorf("%s: not a versions key", describe(bucketVersions, k)))
		}
		name, serial := string(k[:n]), int64(binary.BigEndian.Uint64(k[n+1:]))
		r, ok, err := DecodeVersion(name, serial, v)
		if err != nil {
			return err
		}
		snap.Versions = append(snap.Versions, VersionEntry{Name: name, Serial: serial, Deleted: !ok, Record: r})
		return nil
	})
	if err != nil {
		return Snapshot{}, err
	}
	err = tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error {
		h, err := readValue(bucketHistory, k, v, decodeHistory)
		snap.History = append(snap.History, h)
		return corruptData(err)
	})
	if err != nil {
		return Snapshot{}, err
	}
	err = tx.Bucket(bucketIntents).ForEach(func(k, v []byte) error {
		in, err := readValue(bucketIntents, k, v, decodeIntent)
		snap.Intents = append(snap.Intents, in)
		return corruptData(err)
	})
	if err != nil {
		return Snapshot{}, err
	}
	if v := meta.Get(keyOutputs); v != nil {
		o, err := readValue(bucketMeta, keyOutputs, v, decodeOutputs)
		if err != nil {
			return Snapshot{}, corruptData(err)
		}
		snap.Outputs = &o
	}
	return snap, nil
}

// Load writes snap, a Snapshot of this or another backend, into the state,
// in one transaction, so that the state becomes a copy of it: the same
// lineage, serial, secret key, records, versions, tombstones, history,
// intents and outputs. History entries are numbered anew, in order.
//
// Load writes only into a state that holds nothing but what snap holds, at
// serial 0: a state just created to receive it (its own lineage and key are
// replaced). Load of a snapshot into an identical copy of it does nothing
// and succeeds, so a copy can be retried. Into any other state, Load writes
// nothing and returns an error wrapping ErrNotEmpty; see CheckLoad. It
// returns an error wrapping ErrReadOnly for a read-only Store. Load is one
// transaction, which also removes the mark of a state created for the
// copy (see Options.Copy), and calls Options.OnLoad once it is made.
func (s *Store) Load(snap Snapshot) error {
	if s.readOnly {
		return fmt.Errorf("load state %q: %w", s.path, ErrReadOnly)
	}
	err := s.update(func(tx *bolt.Tx) error {
		cur, err := dumpTx(tx)
		if err != nil {
			return err
		}
		write, err := CheckLoad(cur, snap)
		if err == nil && write {
			err = loadTx(tx, snap)
		}
		if err != nil {
			return err
		}
		// Complete now, or an identical copy already.
		return tx.Bucket(bucketMeta).Delete(keyIncomplete)
	})
	if err != nil {
		return fmt.Errorf("load state %q: %w", s.path, err)
	}
	if s.onLoad != nil {
		s.onLoad(1, 1)
	}
	return nil
}

// loadTx writes snap into tx, over a state that CheckLoad allowed.
func loadTx(tx *bolt.Tx, snap Snapshot) error {
	for _, r := range snap.Records {
		v, err := EncodeRecord(r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketRecords).Put([]byte(r.Name), v); err != nil {
			return err
		}
	}
	for _, e := range snap.Versions {
		v := EncodeTombstone(e.Name, e.Serial)
		if !e.Deleted {
			var err error
			if v, err = EncodeVersion(e.Record); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketVersions).Put(versionKey(e.Name, e.Serial), v); err != nil {
			return err
		}
	}
	history := tx.Bucket(bucketHistory)
	// A partial Load of the same snapshot may have left entries: start
	// again from an empty bucket so that numbering is the snapshot's.
	var old [][]byte
	_ = history.ForEach(func(k, _ []byte) error {
		old = append(old, bytes.Clone(k))
		return nil
	})
	for _, k := range old {
		if err := history.Delete(k); err != nil {
			return err
		}
	}
	for i, h := range snap.History {
		seq := uint64(i + 1)
		v, err := EncodeHistory(h, seq)
		if err != nil {
			return err
		}
		if err := history.Put(historyKey(h.Serial, seq), v); err != nil {
			return err
		}
	}
	if err := history.SetSequence(uint64(len(snap.History))); err != nil {
		return err
	}
	for _, in := range snap.Intents {
		v, err := EncodeIntent(in)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketIntents).Put([]byte(in.Name), v); err != nil {
			return err
		}
	}
	if snap.Outputs != nil {
		v, err := EncodeOutputs(*snap.Outputs)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(keyOutputs, v); err != nil {
			return err
		}
	}
	// The meta values last: the record count counts what is written.
	return putMeta(tx, snap.Meta, snap.Key)
}
