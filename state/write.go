package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// txn is one write being built: its puts, deletes and conditions, and
// what it does to the serial and the records.
type txn struct {
	kv.Batch
	size int // Batch.Size, kept as ops are added
	// serial is the serial after the write; the Store's if it changes
	// none.
	serial int64
	// delta is how many records the write adds, less those it removes;
	// when countSet, count is how many records the stack holds after it,
	// whatever it held before (a Load). A write that changes the serial,
	// or sets the count, writes the record count.
	delta    int64
	count    int64
	countSet bool
	// exists says, of the records the write puts or deletes, whether they
	// exist after it; all says they are every record (a Load).
	exists map[string]bool
	all    bool
	// after, if set, runs once the write is made, under txMu.
	after func()
}

func (t *txn) put(key string, value []byte) {
	t.Put(key, value)
	t.size += len(key) + len(value) + kv.OpOverhead
}

func (t *txn) del(key string) {
	t.Delete(key)
	t.size += len(key) + kv.OpOverhead
}

// setExists notes in t that the record name exists after it, or not.
func (t *txn) setExists(name string, ok bool) {
	if t.exists == nil {
		t.exists = map[string]bool{}
	}
	t.exists[name] = ok
}

// putVersion adds to t the puts of r as the current record and as its
// version at r.Serial.
func (s *Store) putVersion(t *txn, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if limit := s.RecordLimit(); len(data)+checkSize > limit.Bytes {
		return &TooLargeError{Name: r.Name, Size: len(data) + checkSize, Limit: limit}
	}
	t.put(recordKey(r.Name), seal(bucketRecords, []byte(r.Name), data))
	t.put(versionKeyOf(r.Name, r.Serial), seal(bucketVersions, versionKey(r.Name, r.Serial), data))
	return nil
}

// deleteVersion adds to t the delete of the record name and its tombstone
// at serial.
func deleteVersion(t *txn, name string, serial int64) {
	t.del(recordKey(name))
	t.put(versionKeyOf(name, serial), EncodeTombstone(name, serial))
}

// What every write adds to those it is given, for fits: the serial, its
// condition, the record count, the format's condition.
var (
	reserveOps   = 4
	reserveBytes = 2*(len(kvSerial)+12) + len(kvCount) + 20 + len(kvFormat) + 12 + 4*kv.OpOverhead
)

// fits reports whether t, with what every write adds, is within the
// backend's limits.
func (s *Store) fits(t *txn) bool {
	l := s.limits
	return (l.Ops <= 0 || len(t.Ops)+len(t.Conds)+reserveOps <= l.Ops) && (l.Bytes <= 0 || t.size+reserveBytes <= l.Bytes)
}

// tooLarge returns the error for t, which no write of the backend can
// hold. It wraps ErrTooLarge.
func (s *Store) tooLarge(t *txn) error {
	return fmt.Errorf("%w: %d operations of %d bytes, where one write takes %d operations and %d bytes (%s)",
		ErrTooLarge, len(t.Ops)+reserveOps, t.size+reserveBytes, s.limits.Ops, s.limits.Bytes, s.limits.Why)
}

// errStale says that the stack changed under the Store, which read it
// again: the write must be built again.
var errStale = errors.New("state changed under the lock")

// checkWrite returns the error for a write to s now, or nil.
func (s *Store) checkWrite() error {
	switch {
	case s.readOnly:
		return ErrReadOnly
	case s.closed.Load():
		return s.errClosed()
	}
	select {
	case <-s.kv.Lost():
		return fmt.Errorf("state %s: %w", s.quoted, ErrLockLost)
	default:
	}
	return nil
}

// prepare readies s for a write; the caller holds txMu. After a write
// whose outcome was unknown, it reads what it mirrors anew.
func (s *Store) prepare() error {
	if err := s.checkWrite(); err != nil {
		return err
	}
	if s.unsure {
		return s.refresh()
	}
	return nil
}

// refresh reads anew what s mirrors of the stack: the serial and the
// record count, and forgets which records exist and the history's
// sequence. The caller holds txMu.
func (s *Store) refresh() error {
	var (
		m     Meta
		count int64
		ok    bool
	)
	err := s.read(func(vw kv.View) error {
		mv, err := readMetaValues(vw)
		if err != nil {
			return err
		}
		if m, err = s.metaOf(mv); err != nil {
			return err
		}
		count, ok, err = mv.countAt(m.Serial)
		return corruptData(err)
	})
	if err != nil {
		return err
	}
	s.serial, s.count, s.countKnown = m.Serial, count, ok
	s.seqKnown, s.unsure = false, false
	s.forget()
	if ok && count == 0 {
		// No records: none to learn of (a new state's first apply).
		s.noteWrite(map[string]bool{}, true)
	}
	return nil
}

// countAfter returns the record count after t. The caller holds txMu.
func (s *Store) countAfter(t *txn) (int64, error) {
	if t.countSet {
		return t.count, nil
	}
	if !s.countKnown {
		// Never counted, or by a reconcile that did not keep the count:
		// count the records now. Under the lock, they are as s left them.
		var n int64
		err := s.read(func(vw kv.View) error {
			return vw.Scan(prefixRecords, "", true, func(string, []byte) error { n++; return nil })
		})
		if err != nil {
			return 0, err
		}
		s.count, s.countKnown = n, true
	}
	return s.count + t.delta, nil
}

// formatValue is the stored format value that every write is conditional
// on: a state of another format, or a damaged one, is never written to.
var formatValue = EncodeFormat()

// commit makes the write t, conditional on the format and, if t changes
// the serial, on the serial being what s last wrote; the caller holds
// txMu. It returns errStale if the stack changed under s.
func (s *Store) commit(t *txn) error {
	b := kv.Batch{Ops: t.Ops, Conds: t.Conds, Marker: t.Marker}
	// Appends copy: t's own slices stay as they are.
	b.Ops, b.Conds = b.Ops[:len(b.Ops):len(b.Ops)], b.Conds[:len(b.Conds):len(b.Conds)]
	b.Expect(kvFormat, formatValue)
	if t.serial != s.serial || t.countSet {
		count, err := s.countAfter(t)
		if err != nil {
			return err
		}
		b.Put(kvCount, EncodeCount(count, t.serial))
		t.count, t.countSet = count, true
	}
	if t.serial != s.serial {
		v := EncodeSerial(t.serial)
		b.Put(kvSerial, v)
		b.Expect(kvSerial, EncodeSerial(s.serial))
		b.Marker = kvSerial
	}
	s.commits.Add(1)
	ctx, cancel := s.ctx()
	err := s.kv.Write(ctx, &b)
	cancel()
	switch {
	case err == nil:
		s.serial = t.serial
		if t.countSet {
			s.count, s.countKnown = t.count, true
		}
		s.noteWrite(t.exists, t.all)
		if t.after != nil {
			t.after()
		}
		s.releaseSome()
		return nil
	case errors.Is(err, kv.ErrConflict):
		// The stack changed under the lock, or something of it that the
		// write depends on is damaged: read it again, and build the write
		// anew.
		if err := s.refresh(); err != nil {
			return err
		}
		return errStale
	case errors.Is(err, kv.ErrTooLarge), errors.Is(err, kv.ErrReadOnly):
		return mapErr(err)
	}
	// The write may or may not have been made.
	s.unsure = true
	return mapErr(err)
}

// releaseEvery is how many writes may run before the pages of a local
// file's mapping are released again.
const releaseEvery = 64

// releaseSome releases the pages of a local file's mapping every
// releaseEvery writes, so that a long apply does not come to hold the
// whole file in its resident memory: bbolt reads through the mapping
// every page a commit changes, and its commits write to free pages all
// over the file. The caller holds txMu.
func (s *Store) releaseSome() {
	if n := s.commits.Load(); s.releaser != nil && n-s.released >= releaseEvery {
		s.released = n
		s.release()
	}
}

// write makes a write that is not grouped: it builds it with build and
// commits it, building it again if the stack changed under the Store.
// build returns nil for nothing to write. The caller must not hold txMu.
func (s *Store) write(build func() (*txn, error)) error {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	for attempt := 0; ; attempt++ {
		if err := s.prepare(); err != nil {
			return err
		}
		t, err := build()
		if err != nil || t == nil {
			return err
		}
		if !s.fits(t) {
			return s.tooLarge(t)
		}
		err = s.commit(t)
		if errors.Is(err, errStale) && attempt < 2 {
			continue
		}
		return err
	}
}

// call is one caller of group waiting for its result.
type call struct {
	// record names the record the call puts, if any: whether it exists
	// already decides the record count the write holds.
	record string
	// build adds the call's writes to b, or returns an error and leaves
	// b as it was. It may run more than once (when a write is built
	// again), so it must set its results only through b.
	build func(b *batch) error
	done  chan error // buffered: receives the result, or errLead
}

// errLead tells a queued caller of group to commit the queue itself.
var errLead = errors.New("lead the next commit")

// group makes build's write in one shared with the calls that overlap
// it, as the parallel steps of an apply do: the first caller writes at
// once; callers arriving while a write runs queue up, and when it ends one
// of them writes the whole queue, in as few writes as the backend's
// limits allow. So a lone caller never waits for company, and n
// overlapping callers pay for about one sync instead of n.
func (s *Store) group(record string, build func(b *batch) error) error {
	if err := s.checkWrite(); err != nil {
		return err
	}
	c := &call{record: record, build: build, done: make(chan error, 1)}
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
		s.mu.Lock() // the previous leader handed over: c heads the queue
	}
	s.committing = true
	calls := s.queue
	s.queue = nil
	s.mu.Unlock()

	s.runGroup(calls)

	s.mu.Lock()
	if len(s.queue) > 0 {
		s.queue[0].done <- errLead
	} else {
		s.committing = false
	}
	s.mu.Unlock()
	return <-c.done
}

// batch is a write being built from the calls of a group. Its
// txn.exists says, for records the calls so far put or deleted, whether
// they exist after them.
type batch struct {
	txn
	undo []undoExists // what setExists changed, for restore
}

// undoExists is a change setExists made: before it, exists held value
// for name if had.
type undoExists struct {
	name       string
	had, value bool
}

// setExists notes that the record name exists after the calls so far, or
// not.
func (b *batch) setExists(name string, ok bool) {
	value, had := b.exists[name]
	b.undo = append(b.undo, undoExists{name: name, had: had, value: value})
	b.txn.setExists(name, ok)
}

// checkpoint is what batch.restore needs to undo the calls added after it.
type checkpoint struct {
	ops, size, undo int
	serial, delta   int64
}

func (b *batch) checkpoint() checkpoint {
	return checkpoint{ops: len(b.Ops), size: b.size, serial: b.serial, delta: b.delta, undo: len(b.undo)}
}

func (b *batch) restore(c checkpoint) {
	b.Ops, b.size, b.serial, b.delta = b.Ops[:c.ops], c.size, c.serial, c.delta
	for i := len(b.undo) - 1; i >= c.undo; i-- {
		u := b.undo[i]
		if u.had {
			b.exists[u.name] = u.value
		} else {
			delete(b.exists, u.name)
		}
	}
	b.undo = b.undo[:c.undo]
}

// runGroup writes the calls of group and sends each its result. It adds
// calls to a write in order until the next would overflow the backend's
// limits, makes the write, and goes on with the rest. A call whose build
// fails gets its error at once and is left out, having seen the state the
// calls before it leave. If the stack changed under the Store, the write
// is built again; if it fails, every call in it gets the error.
func (s *Store) runGroup(group []*call) {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	stale := 0
	for len(group) > 0 {
		err := s.prepare()
		if err == nil {
			// Whether the records the calls put exist already.
			names := make([]string, len(group))
			for i, c := range group {
				names[i] = c.record
			}
			err = s.learn(names)
		}
		if err != nil {
			for _, c := range group {
				c.done <- err
			}
			return
		}
		b := &batch{txn: txn{serial: s.serial, exists: map[string]bool{}}}
		var in, rest []*call
		for i, c := range group {
			cp := b.checkpoint()
			if err := safeBuild(c.build, b); err != nil {
				b.restore(cp)
				c.done <- err
				continue
			}
			if s.fits(&b.txn) {
				in = append(in, c)
				continue
			}
			b.restore(cp)
			if len(in) == 0 {
				// Alone, it is too large.
				safeBuild(c.build, b)
				c.done <- s.tooLarge(&b.txn)
				b.restore(cp)
				continue
			}
			rest = group[i:]
			break
		}
		if len(in) > 0 {
			if s.hooks != nil {
				s.hooks.commit(len(in))
			}
			err := s.commit(&b.txn)
			if errors.Is(err, errStale) && stale < 2 {
				stale++
				// Build the same calls again over what is stored now.
				group = append(in, rest...)
				continue
			}
			for _, c := range in {
				c.done <- err
			}
		}
		group = rest
	}
}

// safeBuild runs build, turning a panic into an error: a panic escaping
// the caller leading a commit would leave every later caller waiting
// forever.
func safeBuild(build func(b *batch) error, b *batch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return build(b)
}

// recordExists reports whether the record name exists after the calls
// already in b, reading it if they did not touch it. A stored record that
// fails its check is an error wrapping ErrCorrupt. The caller holds txMu.
func (s *Store) recordExists(b *batch, name string) (bool, error) {
	if ok, known := b.exists[name]; known {
		return ok, nil
	}
	var v []byte
	gen := s.readGen()
	err := s.read(func(vw kv.View) error {
		var err error
		v, err = vw.Get(recordKey(name))
		return err
	})
	if err != nil {
		return false, err
	}
	s.noteRead(gen, name, v != nil)
	if v == nil {
		return false, nil
	}
	if _, err := DecodeRecord(name, v); err != nil {
		return false, err
	}
	return true, nil
}

// now is the time written into records and entries: UTC, without the
// monotonic reading, so that what Put returns equals what Get reads back.
func now() time.Time { return time.Now().UTC() }

// Put stores r as the current version of the record r.Name, replacing any
// previous one, in a write that is durable before Put returns. It bumps
// the state serial by one and returns r with Serial set to the new serial
// and UpdatedAt to the time of writing; the same record is kept as the
// version at that serial. Put is safe to call from many goroutines at
// once: concurrent calls share writes. The caller must have redacted
// every secret in r. It returns an error wrapping ErrLockLost if the
// Store lost its lock: then nothing was written.
func (s *Store) Put(r Record) (Record, error) {
	out, err := s.put(r, false)
	if err != nil {
		return Record{}, fmt.Errorf("put %q: %w", r.Name, err)
	}
	return out, nil
}

// PutAndClearIntent stores r as Put does and removes the intent named
// r.Name, if any, in the same write: one sync for what would take two.
// It is what an apply calls once a create it recorded an intent for has
// succeeded. It is safe to call from many goroutines at once.
func (s *Store) PutAndClearIntent(r Record) (Record, error) {
	out, err := s.put(r, true)
	if err != nil {
		return Record{}, fmt.Errorf("put %q and clear its intent: %w", r.Name, err)
	}
	return out, nil
}

// put is Put, and PutAndClearIntent if clearIntent is set.
func (s *Store) put(r Record, clearIntent bool) (Record, error) {
	if err := s.checkWrite(); err != nil {
		return Record{}, err
	}
	if err := checkName(r.Name); err != nil {
		return Record{}, err
	}
	// Catch values JSON cannot encode before entering a group, where an
	// error costs every other caller a retry.
	if _, err := json.Marshal(struct{ In, Out map[string]any }{r.Inputs, r.Outputs}); err != nil {
		return Record{}, fmt.Errorf("encode: %w", err)
	}
	var out Record
	err := s.group(r.Name, func(b *batch) error {
		w := r
		w.Serial, w.UpdatedAt = b.serial+1, now()
		if err := s.putVersion(&b.txn, w); err != nil {
			return err
		}
		if clearIntent {
			b.del(intentKey(r.Name))
		}
		b.serial++
		exists, known := b.exists[r.Name]
		if !known {
			exists, _ = s.knows(r.Name) // learnt before the batch
		}
		if !exists {
			b.delta++
		}
		b.setExists(r.Name, true)
		out = w
		return nil
	})
	return out, err
}

// Delete removes the record name, bumping the state serial by one and
// keeping a tombstone so that Version knows it was gone from then on. It
// returns an error wrapping ErrNoRecord if there is no such record. Delete
// is safe to call from many goroutines at once.
func (s *Store) Delete(name string) error {
	err := s.group("", func(b *batch) error {
		ok, err := s.recordExists(b, name)
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrNoRecord
		}
		b.serial++
		deleteVersion(&b.txn, name, b.serial)
		b.delta--
		b.setExists(name, false)
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	return nil
}

// PutIntent records in, replacing any intent of the same name, and returns
// once that is durable. A zero in.Time is set to now. Intents do not
// change the serial. PutIntent is safe to call from many goroutines at
// once. The caller must have redacted every secret in in.Inputs.
func (s *Store) PutIntent(in Intent) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	if err := checkName(in.Name); err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	if in.Time.IsZero() {
		in.Time = now()
	}
	v, err := EncodeIntent(in)
	if err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	err = s.group("", func(b *batch) error {
		b.put(intentKey(in.Name), v)
		return nil
	})
	if err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	return nil
}

// ClearIntent removes the intent name, once its create has been recorded
// with Put or found to have made nothing, and returns once that is
// durable. Clearing an intent that does not exist writes nothing.
// ClearIntent is safe to call from many goroutines at once.
func (s *Store) ClearIntent(name string) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	var v []byte
	err := s.read(func(vw kv.View) error {
		var err error
		if v, err = vw.Get(intentKey(name)); err == nil && v != nil {
			_, err = DecodeIntent(name, v)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	if v == nil {
		return nil
	}
	err = s.group("", func(b *batch) error {
		b.del(intentKey(name))
		return nil
	})
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	return nil
}

// Rename moves the record oldName to newName in one change that bumps the
// serial by one, and rewrites every other record whose Dependencies name
// oldName to name newName instead; each record changed gets a new version
// at the new serial. It returns an error wrapping ErrNoRecord if oldName
// is not in state and one wrapping ErrExists if newName already is. A
// rename that touches more records than one write of the backend holds
// fails and writes nothing.
func (s *Store) Rename(oldName, newName string) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	if err := checkName(newName); err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	err := s.write(func() (*txn, error) {
		var (
			r          Record
			found      bool
			taken      bool
			dependents []Record
		)
		err := s.read(func(vw kv.View) error {
			return vw.Scan(prefixRecords, "", false, func(k string, v []byte) error {
				name := k[len(prefixRecords):]
				d, err := DecodeRecord(name, v)
				switch {
				case err != nil:
					return err
				case name == oldName:
					r, found = d, true
				case name == newName:
					taken = true
				case slices.Contains(d.Dependencies, oldName):
					dependents = append(dependents, d)
				}
				return nil
			})
		})
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, ErrNoRecord
		case taken || oldName == newName:
			return nil, ErrExists
		}
		t := &txn{serial: s.serial + 1}
		at := now()
		deleteVersion(t, oldName, t.serial)
		r.Name, r.Serial, r.UpdatedAt = newName, t.serial, at
		r.Dependencies = RenameDep(r.Dependencies, oldName, newName)
		if err := s.putVersion(t, r); err != nil {
			return nil, err
		}
		for _, d := range dependents {
			d.Dependencies = RenameDep(d.Dependencies, oldName, newName)
			d.Serial, d.UpdatedAt = t.serial, at
			if err := s.putVersion(t, d); err != nil {
				return nil, err
			}
		}
		t.setExists(oldName, false)
		t.setExists(newName, true)
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	return nil
}

// RenameDep returns deps with oldName replaced by newName, dropping any
// duplicate that creates: how a rename rewrites the dependencies of the
// records.
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
// Several entries may share a serial (an apply that changed nothing): a
// sequence number that grows with every entry keeps them apart and in
// order.
func (s *Store) AddHistory(e HistoryEntry) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("add history %q: %w", e.Command, err)
	}
	err := s.write(func() (*txn, error) {
		if !s.seqKnown {
			var seq uint64
			err := s.read(func(vw kv.View) error {
				return vw.Scan(prefixHistory, "", true, func(k string, _ []byte) error {
					if _, q, ok := parseHistory(k); ok {
						seq = max(seq, q)
					}
					return nil
				})
			})
			if err != nil {
				return nil, err
			}
			s.historySeq, s.seqKnown = seq, true
		}
		w := e
		if w.Serial == 0 {
			w.Serial = s.serial
		}
		if w.Time.IsZero() {
			w.Time = now()
		}
		seq := s.historySeq + 1
		v, err := EncodeHistory(w, seq)
		if err != nil {
			return nil, err
		}
		key := historyKeyOf(w.Serial, seq)
		t := &txn{serial: s.serial}
		t.put(key, v)
		t.Expect(key, nil)
		t.Marker = key
		t.after = func() { s.historySeq = max(s.historySeq, seq) }
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("add history %q: %w", e.Command, err)
	}
	return nil
}

// RewriteVersions rewrites what is stored of the record name, to redact it:
// when an input becomes secret, its clear value must vanish from the record
// and from every past version. It calls fn with the current record, if
// name is in state, and then with every stored version of name, oldest
// first, skipping the tombstones of deletes. Where fn returns true, the
// record it returns is stored in place of the one it was given, under the
// same key and with that one's Name, Serial and UpdatedAt, whatever fn set
// them to. A redaction is not a change: the state serial stays as it is,
// Version returns the rewritten records at the serials of the originals,
// and no history entry is added. The rewrite is one write when it fits in
// one of the backend (always, on a local file); a record with more
// versions than that is rewritten in several, and a rewrite interrupted
// between them is finished by running it again. The bytes replaced may
// stay in a file's free pages until bbolt reuses them.
//
// fn must not call methods of s. If a record fn returns cannot be encoded,
// or fn panics, nothing is written. RewriteVersions returns an error
// wrapping ErrNoRecord if name has never been stored, one wrapping
// ErrCorrupt if something it reads is damaged, and one wrapping
// ErrReadOnly for a read-only Store.
func (s *Store) RewriteVersions(name string, fn func(Record) (Record, bool)) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("rewrite versions of %q: %w", name, err)
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if err := s.rewrite(name, fn); err != nil {
		return fmt.Errorf("rewrite versions of %q: %w", name, err)
	}
	return nil
}

// rewrite does the work of RewriteVersions under txMu.
func (s *Store) rewrite(name string, fn func(Record) (Record, bool)) (err error) {
	if err := s.prepare(); err != nil {
		return err
	}
	type stored struct {
		key     string
		version bool
		r       Record
	}
	var (
		all   []stored
		found bool // something of name is stored, if only a tombstone
	)
	err = s.read(func(vw kv.View) error {
		v, err := vw.Get(recordKey(name))
		if err != nil {
			return err
		}
		if v != nil {
			r, err := DecodeRecord(name, v)
			if err != nil {
				return err
			}
			all = append(all, stored{recordKey(name), false, r})
			found = true
		}
		return vw.Scan(versionsOf(name), "", false, func(k string, v []byte) error {
			n, serial, ok := parseVersion(k)
			if !ok || n != name {
				return nil // not a key of name's
			}
			found = true
			r, ok, err := DecodeVersion(name, serial, v)
			if err != nil || !ok {
				return err // a tombstone, or damage
			}
			all = append(all, stored{k, true, r})
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !found {
		return ErrNoRecord
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	var chunks []*txn
	t := &txn{serial: s.serial}
	for _, st := range all {
		w, ok := fn(st.r)
		if !ok {
			continue
		}
		w.Name, w.Serial, w.UpdatedAt = st.r.Name, st.r.Serial, st.r.UpdatedAt
		encode := EncodeRecord
		if st.version {
			encode = EncodeVersion
		}
		value, err := encode(w)
		if err != nil {
			return err
		}
		t.put(st.key, value)
		if !s.fits(t) {
			t.Ops, t.size = t.Ops[:len(t.Ops)-1], t.size-len(st.key)-len(value)-kv.OpOverhead
			if len(t.Ops) == 0 {
				return s.tooLarge(t)
			}
			chunks = append(chunks, t)
			t = &txn{serial: s.serial}
			t.put(st.key, value)
		}
	}
	if len(t.Ops) > 0 {
		chunks = append(chunks, t)
	}
	for _, t := range chunks {
		if err := s.commit(t); err != nil {
			if errors.Is(err, errStale) {
				err = fmt.Errorf("%w: run it again", err)
			}
			return err
		}
	}
	return nil
}
