package etcdstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
)

// batch is a transaction being built from the calls of a group. Its
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
	return checkpoint{ops: len(b.ops), size: b.size, serial: b.serial, delta: b.delta, undo: len(b.undo)}
}

func (b *batch) restore(c checkpoint) {
	b.ops, b.size, b.serial, b.delta = b.ops[:c.ops], c.size, c.serial, c.delta
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

// call is one caller of group waiting for its result.
type call struct {
	// record names the record the call puts, if any: whether it exists
	// already decides the record count the batch writes.
	record string
	// build adds the call's writes to b, or returns an error and leaves
	// b as it was. It may run more than once (when a batch is built
	// again), so it must set its results only through b.
	build func(b *batch) error
	done  chan error // buffered: receives the result, or errLead
}

// errLead tells a queued caller of group to commit the queue itself.
var errLead = errors.New("lead the next commit")

// group runs build in a transaction shared with the calls that overlap
// it, as the bbolt store's commit does: the first caller commits at once;
// callers arriving while a commit runs queue up, and when it ends one of
// them commits the whole queue, in as few transactions as the server's
// limits allow. A lone caller never waits for company.
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

// runGroup commits the calls of group and sends each its result. It adds
// calls to a batch in order until the next would overflow the server's
// limits, commits the batch, and goes on with the rest. A call whose build
// fails gets its error at once and is left out, having seen the state the
// calls before it leave. If the serial changed under the Store, the batch
// is built again; if the transaction fails, every call in it gets the
// error.
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
// already in b, reading it from etcd if they did not touch it. A stored
// record that fails its check is an error wrapping state.ErrCorrupt.
func (s *Store) recordExists(b *batch, name string) (bool, error) {
	if ok, known := b.exists[name]; known {
		return ok, nil
	}
	v, rev, err := s.getAt(s.k.record(name))
	if err != nil {
		return false, s.readErr("read", err)
	}
	s.noteRead(rev, name, v != nil)
	if v == nil {
		return false, nil
	}
	if _, err := state.DecodeRecord(name, v); err != nil {
		return false, err
	}
	return true, nil
}

// putVersion adds to t the puts of r as the current record and as its
// version at r.Serial.
func (s *Store) putVersion(t *txn, r state.Record) error {
	rec, err := state.EncodeRecord(r)
	if err != nil {
		return err
	}
	ver, err := state.EncodeVersion(r)
	if err != nil {
		return err
	}
	t.put(s.k.record(r.Name), rec)
	t.put(s.k.version(r.Name, r.Serial), ver)
	return nil
}

// deleteVersion adds to t the delete of the record name and its tombstone
// at serial.
func (s *Store) deleteVersion(t *txn, name string, serial int64) {
	t.del(s.k.record(name))
	t.put(s.k.version(name, serial), state.EncodeTombstone(name, serial))
}

// now is the time written into records and entries: UTC, without the
// monotonic reading, so that what Put returns equals what Get reads back.
func now() time.Time { return time.Now().UTC() }

// Put stores r as the current version of the record r.Name, as
// state.Store.Put does, in a transaction committed through raft before
// Put returns. Concurrent calls share transactions. It returns an error
// wrapping state.ErrLockLost if the Store lost its lock: then nothing was
// written.
func (s *Store) Put(r state.Record) (state.Record, error) {
	out, err := s.put(r, false)
	if err != nil {
		return state.Record{}, fmt.Errorf("put %q: %w", r.Name, err)
	}
	return out, nil
}

// PutAndClearIntent stores r as Put does and removes the intent named
// r.Name, if any, in the same transaction.
func (s *Store) PutAndClearIntent(r state.Record) (state.Record, error) {
	out, err := s.put(r, true)
	if err != nil {
		return state.Record{}, fmt.Errorf("put %q and clear its intent: %w", r.Name, err)
	}
	return out, nil
}

// put is Put, and PutAndClearIntent if clearIntent is set.
func (s *Store) put(r state.Record, clearIntent bool) (state.Record, error) {
	if err := s.checkWrite(); err != nil {
		return state.Record{}, err
	}
	if err := state.CheckName(r.Name); err != nil {
		return state.Record{}, err
	}
	if _, err := json.Marshal(struct{ In, Out map[string]any }{r.Inputs, r.Outputs}); err != nil {
		return state.Record{}, fmt.Errorf("encode: %w", err)
	}
	var out state.Record
	err := s.group(r.Name, func(b *batch) error {
		w := r
		w.Serial, w.UpdatedAt = b.serial+1, now()
		if err := s.putVersion(&b.txn, w); err != nil {
			return err
		}
		if clearIntent {
			b.del(s.k.intent(r.Name))
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

// Delete removes the record name, as state.Store.Delete does. It returns
// an error wrapping state.ErrNoRecord if there is no such record.
func (s *Store) Delete(name string) error {
	err := s.group("", func(b *batch) error {
		ok, err := s.recordExists(b, name)
		switch {
		case err != nil:
			return err
		case !ok:
			return state.ErrNoRecord
		}
		b.serial++
		s.deleteVersion(&b.txn, name, b.serial)
		b.delta--
		b.setExists(name, false)
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	return nil
}

// PutIntent records in, replacing any intent of the same name, as
// state.Store.PutIntent does.
func (s *Store) PutIntent(in state.Intent) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	if err := state.CheckName(in.Name); err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	if in.Time.IsZero() {
		in.Time = now()
	}
	v, err := state.EncodeIntent(in)
	if err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	err = s.group("", func(b *batch) error {
		b.put(s.k.intent(in.Name), v)
		return nil
	})
	if err != nil {
		return fmt.Errorf("put intent %q: %w", in.Name, err)
	}
	return nil
}

// ClearIntent removes the intent name, as state.Store.ClearIntent does.
// Clearing an intent that does not exist writes nothing.
func (s *Store) ClearIntent(name string) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	v, err := s.get(s.k.intent(name))
	if err == nil && v != nil {
		_, err = state.DecodeIntent(name, v)
	} else if err != nil {
		err = s.readErr("read", err)
	}
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	if v == nil {
		return nil
	}
	err = s.group("", func(b *batch) error {
		b.del(s.k.intent(name))
		return nil
	})
	if err != nil {
		return fmt.Errorf("clear intent %q: %w", name, err)
	}
	return nil
}

// Rename moves the record oldName to newName and rewrites the records
// that depend on it, as state.Store.Rename does, in one transaction. It
// returns an error wrapping state.ErrNoRecord if oldName is not in state
// and one wrapping state.ErrExists if newName already is. A rename that
// touches more records than one transaction can hold fails and writes
// nothing.
func (s *Store) Rename(oldName, newName string) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	if err := state.CheckName(newName); err != nil {
		return fmt.Errorf("rename %q to %q: %w", oldName, newName, err)
	}
	err := s.write(func() (*txn, error) {
		var (
			r          state.Record
			found      bool
			taken      bool
			dependents []state.Record
		)
		prefix := s.k.records()
		err := s.scan(prefix, false, func(key string, value []byte) error {
			name := key[len(prefix):]
			d, err := state.DecodeRecord(name, value)
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
		switch {
		case err != nil:
			return nil, s.wrapRead(err)
		case !found:
			return nil, state.ErrNoRecord
		case taken || oldName == newName:
			return nil, state.ErrExists
		}
		t := &txn{serial: s.serial + 1}
		at := now()
		s.deleteVersion(t, oldName, t.serial)
		r.Name, r.Serial, r.UpdatedAt = newName, t.serial, at
		r.Dependencies = state.RenameDep(r.Dependencies, oldName, newName)
		if err := s.putVersion(t, r); err != nil {
			return nil, err
		}
		for _, d := range dependents {
			d.Dependencies = state.RenameDep(d.Dependencies, oldName, newName)
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

// AddHistory appends e to the history, as state.Store.AddHistory does. A
// zero e.Serial is set to the current serial and a zero e.Time to now.
func (s *Store) AddHistory(e state.HistoryEntry) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("add history %q: %w", e.Command, err)
	}
	err := s.write(func() (*txn, error) {
		w := e
		if w.Serial == 0 {
			w.Serial = s.serial
		}
		if w.Time.IsZero() {
			w.Time = now()
		}
		seq := s.historySeq + 1
		v, err := state.EncodeHistory(w, seq)
		if err != nil {
			return nil, err
		}
		key := s.k.historyEntry(w.Serial, seq)
		t := &txn{serial: s.serial, marker: key, markerValue: v}
		t.put(key, v)
		t.cmps = append(t.cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		t.after = func() { s.historySeq = max(s.historySeq, seq) }
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("add history %q: %w", e.Command, err)
	}
	return nil
}

// PutOutputs records o in place of the outputs recorded before, as
// state.Store.PutOutputs does. A zero o.Serial is set to the current
// serial and a zero o.Time to now; the serial does not change.
func (s *Store) PutOutputs(o state.Outputs) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("put outputs: %w", err)
	}
	if o.Time.IsZero() {
		o.Time = now()
	}
	err := s.write(func() (*txn, error) {
		w := o
		if w.Serial == 0 {
			w.Serial = s.serial
		}
		v, err := state.EncodeOutputs(w)
		if err != nil {
			return nil, err
		}
		key := s.k.outputs()
		t := &txn{serial: s.serial, marker: key, markerValue: v}
		t.put(key, v)
		return t, nil
	})
	if err != nil {
		return fmt.Errorf("put outputs: %w", err)
	}
	return nil
}
