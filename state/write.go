package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// commit runs fn in a read-write transaction and returns once that is
// synced. Calls that overlap, as the parallel steps of an apply do, share
// commits: the first caller commits at once; callers arriving while a commit
// runs queue up, and when it ends one of them commits the whole queue in one
// transaction. So a lone caller never waits for company (as db.Batch makes
// it wait up to MaxBatchDelay), and n overlapping callers pay for about one
// sync instead of n. fn may run more than once (see runGroup), so it must
// leave nothing behind but its writes to tx and the results it sets on
// success.
func (s *Store) commit(fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	c := &call{fn: fn, done: make(chan error, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, c)
	if s.committing {
		if s.hooks != nil {
			s.hooks.queued(len(s.queue))
		}
		s.mu.Unlock()
		if err := <-c.done; err != errLead {
			return err
		}
		// The previous leader handed over: c heads the queue.
		s.mu.Lock()
	}
	s.committing = true
	group := s.queue
	s.queue = nil
	s.mu.Unlock()

	s.runGroup(group)
	s.releaseSome()

	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].done <- errLead
	} else {
		s.committing = false
	}
	s.mu.Unlock()
	return <-c.done
}

// releaseEvery is how many commits may run before the pages of the
// file's mapping are released again.
const releaseEvery = 64

// releaseSome releases the pages of the file's mapping (see release)
// every releaseEvery commits, so that a long apply does not come to hold
// the whole file in its resident memory: bbolt reads through the mapping
// every page a commit changes, and its commits write to free pages all
// over the file. Only the caller committing calls it.
func (s *Store) releaseSome() {
	if n := s.commits.Load(); n-s.released >= releaseEvery {
		s.released = n
		s.db.View(func(tx *bolt.Tx) error {
			release(tx)
			return nil
		})
	}
}

// call is one caller of commit waiting for its result.
type call struct {
	fn   func(tx *bolt.Tx) error
	done chan error // buffered: receives the result, or errLead
}

// errLead tells a queued caller of commit to commit the queue itself.
var errLead = errors.New("lead the next commit")

// runGroup runs the calls of group in one transaction and sends each its
// result. A call whose fn fails is taken out and the rest run again in a new
// transaction, since the failed one's writes cannot be undone alone. The
// failed calls then run once more, each in its own transaction after the
// group's, so that what they return does not depend on writes that were
// rolled back.
func (s *Store) runGroup(group []*call) {
	var failed []*call
	for len(group) > 0 {
		bad := -1
		if s.hooks != nil {
			s.hooks.commit(len(group))
		}
		s.commits.Add(1)
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, c := range group {
				if err := safeCall(c.fn, tx); err != nil {
					bad = i
					return err
				}
			}
			return nil
		})
		if bad >= 0 {
			failed = append(failed, group[bad])
			group = slices.Delete(group, bad, bad+1)
			continue
		}
		for _, c := range group {
			c.done <- err
		}
		break
	}
	for _, c := range failed {
		if s.hooks != nil {
			s.hooks.commit(1)
		}
		s.commits.Add(1)
		c.done <- s.db.Update(func(tx *bolt.Tx) error { return safeCall(c.fn, tx) })
	}
}

// safeCall runs fn, turning a panic into an error: a panic escaping the
// caller leading a commit would leave every later caller waiting forever.
func safeCall(fn func(tx *bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(tx)
}

// update runs fn alone in a read-write transaction and returns once it is
// synced.
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	s.commits.Add(1)
	return s.db.Update(fn)
}

// bumpSerial increments the state serial in tx and returns the new value.
// It writes the record count at the new serial too: delta more records
// than before (the caller's write adds or removes them after the call).
func bumpSerial(tx *bolt.Tx, delta int64) (int64, error) {
	meta := tx.Bucket(bucketMeta)
	m, err := readMeta(meta)
	if err != nil {
		return 0, corruptData(err)
	}
	count, err := recordCount(tx, m.Serial)
	if err != nil {
		return 0, err
	}
	m.Serial++
	if err := putCheckedInt(meta, keySerial, keySerialCheck, uint64(m.Serial)); err != nil {
		return 0, err
	}
	return m.Serial, meta.Put(keyCount, EncodeCount(count+delta, m.Serial))
}

// recordCount returns the number of records in tx, a state at serial: the
// count stored, when it was counted at serial, or else counted now (a
// reconcile that did not keep the count wrote since).
func recordCount(tx *bolt.Tx, serial int64) (int64, error) {
	if v := tx.Bucket(bucketMeta).Get(keyCount); v != nil {
		count, at, err := DecodeCount(v)
		if err != nil {
			return 0, err
		}
		if at == serial {
			return count, nil
		}
	}
	return countRecords(tx), nil
}

// countRecords counts the records in tx, with what tx wrote (which
// bbolt's Stats leave out until it commits).
func countRecords(tx *bolt.Tx) int64 {
	var n int64
	c := tx.Bucket(bucketRecords).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// putVersion stores r as the current record and as its version at r.Serial.
func putVersion(tx *bolt.Tx, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if n := len(data) + checkSize; n > boltRecordLimit {
		// bbolt would panic at commit on a value near its limit.
		return &TooLargeError{Name: r.Name, Size: n, Limit: RecordLimit{Bytes: boltRecordLimit, Why: "bbolt stores a value of up to 2 GiB"}}
	}
	if err := putValue(tx, bucketRecords, []byte(r.Name), data); err != nil {
		return err
	}
	return putValue(tx, bucketVersions, versionKey(r.Name, r.Serial), data)
}

// deleteVersion removes the current record name and stores a tombstone, an
// empty payload, as its version at serial.
func deleteVersion(tx *bolt.Tx, name string, serial int64) error {
	if err := tx.Bucket(bucketRecords).Delete([]byte(name)); err != nil {
		return err
	}
	return putValue(tx, bucketVersions, versionKey(name, serial), nil)
}

// now is the time written into records and entries: UTC, without the
// monotonic reading, so that what Put returns equals what Get reads back.
func now() time.Time { return time.Now().UTC() }

// Put stores r as the current version of the record r.Name, replacing any
// previous one, in its own transaction that is synced before Put returns.
// It bumps the state serial by one and returns r with Serial set to the new
// serial and UpdatedAt to the time of writing; the same record is kept as
// the version at that serial. Put is safe to call from many goroutines at
// once. The caller must have redacted every secret in r.
func (s *Store) Put(r Record) (Record, error) {
	out, err := s.put(r, false)
	if err != nil {
		return Record{}, fmt.Errorf("put %q: %w", r.Name, err)
	}
	return out, nil
}

// put is Put, and PutAndClearIntent if clearIntent is set.
func (s *Store) put(r Record, clearIntent bool) (Record, error) {
	if s.readOnly {
		return Record{}, ErrReadOnly
	}
	if err := checkName(r.Name); err != nil {
		return Record{}, err
	}
	// Catch values JSON cannot encode before entering a batch, where an
	// error costs every other caller a retry.
	if _, err := json.Marshal(struct{ In, Out map[string]any }{r.Inputs, r.Outputs}); err != nil {
		return Record{}, fmt.Errorf("encode: %w", err)
	}
	var out Record
	err := s.commit(func(tx *bolt.Tx) error {
		var added int64
		if tx.Bucket(bucketRecords).Get([]byte(r.Name)) == nil {
			added = 1
		}
		serial, err := bumpSerial(tx, added)
		if err != nil {
			return err
		}
		w := r
		w.Serial, w.UpdatedAt = serial, now()
		if err := putVersion(tx, w); err != nil {
			return err
		}
		if clearIntent {
			if err := tx.Bucket(bucketIntents).Delete([]byte(r.Name)); err != nil {
				return err
			}
		}
		out = w
		return nil
	})
	return out, err
}

// PutAndClearIntent stores r as Put does and removes the intent named
// r.Name, if any, in the same transaction: one sync for what would take
// two. It is what an apply calls once a create it recorded an intent for
// has succeeded. It is safe to call from many goroutines at once.
func (s *Store) PutAndClearIntent(r Record) (Record, error) {
	out, err := s.put(r, true)
	if err != nil {
		return Record{}, fmt.Errorf("put %q and clear its intent: %w", r.Name, err)
	}
	return out, nil
}

// Delete removes the record name, bumping the state serial by one and
// keeping a tombstone so that Version knows it was gone from then on. It
// returns an error wrapping ErrNoRecord if there is no such record. Delete
// is safe to call from many goroutines at once.
func (s *Store) Delete(name string) error {
	if s.readOnly {
		return fmt.Errorf("delete %q: %w", name, ErrReadOnly)
	}
	err := s.commit(func(tx *bolt.Tx) error {
		v, err := getValue(tx, bucketRecords, []byte(name))
		switch {
		case err != nil:
			return corruptData(err)
		case v == nil:
			return ErrNoRecord
		}
		serial, err := bumpSerial(tx, -1)
		if err != nil {
			return err
		}
		return deleteVersion(tx, name, serial)
	})
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	return nil
}

// Rename moves the record oldName to newName in one change that bumps the
// serial by one, and rewrites every other record whose Dependencies name
// oldName to name newName instead; each record changed gets a new version at
// the new serial. It returns an error wrapping ErrNoRecord if oldName is not
// in state and one wrapping ErrExists if newName already is.
func (s *Store) Rename(oldName, newName string) error {
	if s.readOnly {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, ErrReadOnly)
	}
	if err := checkName(newName); err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		records := tx.Bucket(bucketRecords)
		data := records.Get([]byte(oldName))
		if data == nil {
			return ErrNoRecord
		}
		if records.Get([]byte(newName)) != nil {
			return ErrExists
		}
		r, err := readValue(bucketRecords, []byte(oldName), data, decodeRecord)
		if err != nil {
			return corruptData(err)
		}
		// Decode every dependent before writing: bbolt slices are not
		// valid across writes to their bucket.
		var dependents []Record
		err = records.ForEach(func(k, v []byte) error {
			if string(k) == oldName {
				return nil
			}
			d, err := readValue(bucketRecords, k, v, decodeRecord)
			if err != nil {
				return corruptData(err)
			}
			if slices.Contains(d.Dependencies, oldName) {
				dependents = append(dependents, d)
			}
			return nil
		})
		if err != nil {
			return err
		}
		serial, err := bumpSerial(tx, 0)
		if err != nil {
			return err
		}
		at := now()
		if err := deleteVersion(tx, oldName, serial); err != nil {
			return err
		}
		r.Name, r.Serial, r.UpdatedAt = newName, serial, at
		r.Dependencies = RenameDep(r.Dependencies, oldName, newName)
		if err := putVersion(tx, r); err != nil {
			return err
		}
		for _, d := range dependents {
			d.Dependencies = RenameDep(d.Dependencies, oldName, newName)
			d.Serial, d.UpdatedAt = serial, at
			if err := putVersion(tx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	return nil
}

// RenameDep returns deps with oldName replaced by newName, dropping any
// duplicate that creates: how a rename rewrites the dependencies of the
// records, in every Backend.
func RenameDep(deps []string, oldName, newName string) []string {
	if !slices.Contains(deps, oldName) {
		return deps
	}
	out := make([]string, 0, len(deps))
	for _, d := range deps {
		if d == oldName {
			d = newName
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// AddHistory appends e to the history. A zero e.Serial is set to the
// current serial and a zero e.Time to now. It does not change the serial.
func (s *Store) AddHistory(e HistoryEntry) error {
	if s.readOnly {
		return fmt.Errorf("add history %q: %w", e.Command, ErrReadOnly)
	}
	err := s.update(func(tx *bolt.Tx) error {
		m, err := readMeta(tx.Bucket(bucketMeta))
		if err != nil {
			return corruptData(err)
		}
		w := e
		if w.Serial == 0 {
			w.Serial = m.Serial
		}
		if w.Time.IsZero() {
			w.Time = now()
		}
		data, err := json.Marshal(w)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		// Several entries may share a serial (an apply that changed
		// nothing): the bucket sequence keeps them apart and in order.
		b := tx.Bucket(bucketHistory)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		key := historyKey(w.Serial, seq)
		return putValue(tx, bucketHistory, key, data)
	})
	if err != nil {
		return fmt.Errorf("add history %q: %w", e.Command, err)
	}
	return nil
}

// PutIntent records in, replacing any intent of the same name, and returns
// once it is synced. A zero in.Time is set to now. Intents do not change the
// serial. PutIntent is safe to call from many goroutines at once. The
// caller must have redacted every secret in in.Inputs.
func (s *Store) PutIntent(in Intent) error {
	if s.readOnly {
		return fmt.Errorf("put intent %q: %w", in.Name, ErrReadOnly)
	}
	if err := checkName(in.Name); err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	if in.Time.IsZero() {
		in.Time = now()
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("put intent %q: encode: %w", in.Name, err)
	}
	err = s.commit(func(tx *bolt.Tx) error {
		return putValue(tx, bucketIntents, []byte(in.Name), data)
	})
	if err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	return nil
}

// ClearIntent removes the intent name, once its create has been recorded
// with Put or found to have made nothing, and returns once that is synced.
// Clearing an intent that does not exist does nothing. ClearIntent is safe
// to call from many goroutines at once.
func (s *Store) ClearIntent(name string) error {
	if s.readOnly {
		return fmt.Errorf("clear intent %q: %w", name, ErrReadOnly)
	}
	// Skip the commit, and its sync, when there is nothing to clear.
	var found bool
	err := s.view(func(tx *bolt.Tx) error {
		v, err := getValue(tx, bucketIntents, []byte(name))
		found = v != nil
		return corruptData(err)
	})
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	if !found {
		return nil
	}
	err = s.commit(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIntents).Delete([]byte(name))
	})
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	return nil
}

// RewriteVersions rewrites what is stored of the record name, to redact it:
// when an input becomes secret, its clear value must vanish from the record
// and from every past version. In one transaction, it calls fn with the
// current record, if name is in state, and then with every stored version
// of name, oldest first, skipping the tombstones of deletes. Where fn
// returns true, the record it returns is stored in place of the one it was
// given, under the same key and with that one's Name, Serial and UpdatedAt,
// whatever fn set them to. A redaction is not a change: the state serial
// stays as it is, Version returns the rewritten records at the serials of
// the originals, and no history entry is added. The bytes replaced may stay
// in the file's free pages until bbolt reuses them.
//
// fn runs inside the write transaction and must not call methods of s. If
// a record fn returns cannot be encoded, or fn panics, nothing is written.
// RewriteVersions returns an error wrapping ErrNoRecord if name has never
// been stored, one wrapping ErrCorrupt if something it reads is damaged, and
// one wrapping ErrReadOnly for a read-only Store.
func (s *Store) RewriteVersions(name string, fn func(Record) (Record, bool)) error {
	if s.readOnly {
		return fmt.Errorf("rewrite versions of %q: %w", name, ErrReadOnly)
	}
	err := s.update(func(tx *bolt.Tx) error {
		// Read everything before writing: bbolt slices are not valid
		// across writes to their bucket.
		type stored struct {
			bucket, key []byte
			r           Record
		}
		var (
			all   []stored
			found bool // something of name is stored, if only a tombstone
		)
		key := []byte(name)
		if v := tx.Bucket(bucketRecords).Get(key); v != nil {
			r, err := readValue(bucketRecords, key, v, decodeRecord)
			if err != nil {
				return corruptData(err)
			}
			all = append(all, stored{bucketRecords, key, r})
			found = true
		}
		prefix := versionPrefix(name)
		c := tx.Bucket(bucketVersions).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				continue // not a key of name's (names hold no zero byte)
			}
			found = true
			payload, err := openValue(bucketVersions, k, v)
			if err != nil {
				return corruptData(err)
			}
			if len(payload) == 0 {
				continue // a tombstone
			}
			r, err := decodeRecord(payload)
			if err != nil {
				return corruptData(fmt.Errorf("%s: %w", describe(bucketVersions, k), err))
			}
			all = append(all, stored{bucketVersions, bytes.Clone(k), r})
		}
		if !found {
			return ErrNoRecord
		}
		for _, st := range all {
			w, ok := fn(st.r)
			if !ok {
				continue
			}
			w.Name, w.Serial, w.UpdatedAt = st.r.Name, st.r.Serial, st.r.UpdatedAt
			data, err := json.Marshal(w)
			if err != nil {
				return fmt.Errorf("%s: encode: %w", describe(st.bucket, st.key), err)
			}
			if err := putValue(tx, st.bucket, st.key, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rewrite versions of %q: %w", name, err)
	}
	return nil
}
