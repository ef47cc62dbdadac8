package etcdstate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
)

// RewriteVersions rewrites what is stored of the record name, to redact
// it, as state.Store.RewriteVersions does: fn is called with the current
// record, if any, then with every version, oldest first, skipping
// tombstones, and where it returns true its record replaces the one given,
// keeping that one's Name, Serial and UpdatedAt. The serial does not
// change. The rewrite is one transaction when it fits in one; a record
// with more versions than that is rewritten in several, each conditional
// on the lock, and a rewrite interrupted between them is finished by
// running it again. fn must not call methods of s.
func (s *Store) RewriteVersions(name string, fn func(state.Record) (state.Record, bool)) error {
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
func (s *Store) rewrite(name string, fn func(state.Record) (state.Record, bool)) error {
	if err := s.prepare(); err != nil {
		return err
	}
	type stored struct {
		key     string
		version bool
		r       state.Record
	}
	var (
		all   []stored
		found bool // something of name is stored, if only a tombstone
	)
	v, err := s.get(s.k.record(name))
	if err != nil {
		return s.readErr("read", err)
	}
	if v != nil {
		r, err := state.DecodeRecord(name, v)
		if err != nil {
			return err
		}
		all = append(all, stored{s.k.record(name), false, r})
		found = true
	}
	err = s.scan(s.k.versionsOf(name), false, func(key string, value []byte) error {
		n, serial, ok := s.k.parseVersion(key)
		if !ok || n != name {
			return nil // not a key of name's
		}
		found = true
		r, ok, err := state.DecodeVersion(name, serial, value)
		if err != nil || !ok {
			return err // a tombstone, or damage
		}
		all = append(all, stored{key, true, r})
		return nil
	})
	if err != nil {
		return s.wrapRead(err)
	}
	if !found {
		return state.ErrNoRecord
	}
	var chunks []*txn
	t := &txn{serial: s.serial}
	for _, st := range all {
		w, ok := fn(st.r)
		if !ok {
			continue
		}
		w.Name, w.Serial, w.UpdatedAt = st.r.Name, st.r.Serial, st.r.UpdatedAt
		encode := state.EncodeRecord
		if st.version {
			encode = state.EncodeVersion
		}
		value, err := encode(w)
		if err != nil {
			return err
		}
		t.put(st.key, value)
		if !s.fits(t) {
			t.ops, t.size = t.ops[:len(t.ops)-1], t.size-len(st.key)-len(value)-opOverhead
			if len(t.ops) == 0 {
				return s.tooLarge(t)
			}
			chunks = append(chunks, t)
			t = &txn{serial: s.serial}
			t.put(st.key, value)
		}
	}
	if len(t.ops) > 0 {
		chunks = append(chunks, t)
	}
	for _, t := range chunks {
		if err := s.commit(t); err != nil {
			return err
		}
	}
	return nil
}

// Dump returns the whole state, read at one revision (the snapshot's, for
// a read-only Store), as state.Store.Dump does. It returns an error
// wrapping state.ErrCorrupt if any value fails its check or cannot be
// decoded.
func (s *Store) Dump() (state.Snapshot, error) {
	if s.closed.Load() {
		return state.Snapshot{}, s.errClosed()
	}
	snap, err := s.dump(context.Background(), s.rev)
	if err != nil {
		return state.Snapshot{}, fmt.Errorf("dump state %s: %w", s.location, err)
	}
	return snap, nil
}

// dump reads the whole state at rev (0: the latest).
func (s *Store) dump(ctx context.Context, rev int64) (state.Snapshot, error) {
	var snap state.Snapshot
	mr, err := s.readMetaFull(ctx, rev)
	if err != nil {
		return snap, err
	}
	rev = mr.rev
	snap.Meta, snap.Key = mr.Meta, mr.key
	records, intents := s.k.records(), s.k.intents()
	checked := false // the records against the count
	for _, part := range []struct {
		prefix string
		read   func(key string, value []byte) error
	}{
		{records, func(key string, value []byte) error {
			r, err := state.DecodeRecord(key[len(records):], value)
			snap.Records = append(snap.Records, r)
			return err
		}},
		{s.k.versions(), func(key string, value []byte) error {
			name, serial, ok := s.k.parseVersion(key)
			if !ok {
				return fmt.Errorf("%w: bad versions key %q", state.ErrCorrupt, key)
			}
			r, ok, err := state.DecodeVersion(name, serial, value)
			snap.Versions = append(snap.Versions, state.VersionEntry{Name: name, Serial: serial, Deleted: !ok, Record: r})
			return err
		}},
		{s.k.history(), func(key string, value []byte) error {
			serial, seq, ok := s.k.parseHistory(key)
			if !ok {
				return fmt.Errorf("%w: bad history key %q", state.ErrCorrupt, key)
			}
			h, err := state.DecodeHistory(serial, seq, value)
			snap.History = append(snap.History, h)
			return err
		}},
		{intents, func(key string, value []byte) error {
			in, err := state.DecodeIntent(key[len(intents):], value)
			snap.Intents = append(snap.Intents, in)
			return err
		}},
	} {
		if err := s.scanAt(ctx, part.prefix, rev, false, part.read); err != nil {
			return state.Snapshot{}, s.wrapRead(err)
		}
		if !checked {
			checked = true
			if err := s.checkCount(ctx, mr, int64(len(snap.Records))); err != nil {
				return state.Snapshot{}, err
			}
		}
	}
	outputs := s.k.outputs()
	err = s.scanAt(ctx, outputs, rev, false, func(key string, value []byte) error {
		if key != outputs {
			return nil // another key that starts the same; none is written
		}
		o, err := state.DecodeOutputs(value)
		snap.Outputs = &o
		return err
	})
	if err != nil {
		return state.Snapshot{}, s.wrapRead(err)
	}
	return snap, nil
}

// Load writes snap into the stack, as state.Store.Load does: only into a
// stack that holds nothing but what snap holds, at serial 0, and it does
// nothing to an identical copy; into any other it writes nothing and
// returns an error wrapping state.ErrNotEmpty. A snapshot too large for
// one transaction is written in several, each conditional on the lock:
// the first marks the stack incomplete (as Open does a stack it creates
// with Options.Copy), and the last writes the meta values (lineage, key,
// serial) and removes the mark. Until then every Open but one for the
// copy refuses the stack, and a Load of the same snapshot completes it.
// Options.OnLoad is called after each transaction.
func (s *Store) Load(snap state.Snapshot) error {
	if err := s.checkWrite(); err != nil {
		return fmt.Errorf("load state %s: %w", s.location, err)
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if err := s.load(snap); err != nil {
		return fmt.Errorf("load state %s: %w", s.location, err)
	}
	return nil
}

// load does the work of Load under txMu.
func (s *Store) load(snap state.Snapshot) error {
	if err := s.prepare(); err != nil {
		return err
	}
	cur, err := s.dump(context.Background(), 0)
	if err != nil {
		return err
	}
	write, err := state.CheckLoad(cur, snap)
	if err != nil {
		return err
	}
	if !write {
		// An identical copy: complete, if it is still marked so.
		t := &txn{serial: s.serial}
		t.del(s.k.incomplete())
		return s.commit(t)
	}
	// The first transaction marks the stack incomplete, as Open does a
	// stack it creates for a copy; the last removes the mark. In one
	// transaction, the copy needs no mark: the put is taken out below.
	mark := state.CopyMark{}
	if s.opts.Copy != nil {
		mark = *s.opts.Copy
	}
	markValue := state.EncodeCopyMark(mark)
	var chunks []*txn
	t := &txn{serial: s.serial}
	t.put(s.k.incomplete(), markValue)
	// Nor is the record count right until the last.
	t.del(s.k.count())
	// add adds the put of value at key to the transaction being built,
	// or to a new one if it would not fit.
	add := func(key string, value []byte) error {
		t.put(key, value)
		if s.fits(t) {
			return nil
		}
		t.ops, t.size = t.ops[:len(t.ops)-1], t.size-len(key)-len(value)-opOverhead
		if len(t.ops) == 0 {
			return s.tooLarge(t)
		}
		chunks = append(chunks, t)
		t = &txn{serial: s.serial}
		t.put(key, value)
		return nil
	}
	for _, r := range snap.Records {
		v, err := state.EncodeRecord(r)
		if err == nil {
			err = add(s.k.record(r.Name), v)
		}
		if err != nil {
			return err
		}
	}
	for _, e := range snap.Versions {
		v := state.EncodeTombstone(e.Name, e.Serial)
		if !e.Deleted {
			if v, err = state.EncodeVersion(e.Record); err != nil {
				return err
			}
		}
		if err := add(s.k.version(e.Name, e.Serial), v); err != nil {
			return err
		}
	}
	for i, h := range snap.History {
		seq := uint64(i + 1)
		v, err := state.EncodeHistory(h, seq)
		if err == nil {
			err = add(s.k.historyEntry(h.Serial, seq), v)
		}
		if err != nil {
			return err
		}
	}
	for _, in := range snap.Intents {
		v, err := state.EncodeIntent(in)
		if err == nil {
			err = add(s.k.intent(in.Name), v)
		}
		if err != nil {
			return err
		}
	}
	if snap.Outputs != nil {
		v, err := state.EncodeOutputs(*snap.Outputs)
		if err == nil {
			err = add(s.k.outputs(), v)
		}
		if err != nil {
			return err
		}
	}
	// The meta values and the serial last, in the last transaction, with
	// the end of the mark.
	last := func(t *txn) {
		t.put(s.k.lineage(), state.EncodeLineage(snap.Meta.Lineage))
		t.put(s.k.secret(), state.EncodeSecretKey(snap.Key))
		t.del(s.k.incomplete())
	}
	ops, size := len(t.ops), t.size
	if last(t); !s.fits(t) {
		t.ops, t.size = t.ops[:ops], size
		chunks = append(chunks, t)
		t = &txn{}
		last(t)
	}
	t.serial = snap.Meta.Serial
	t.count, t.countSet = int64(len(snap.Records)), true
	chunks = append(chunks, t)
	if len(chunks) == 1 {
		// The mark and the count's delete, taken out again.
		t.ops, t.size = t.ops[2:], t.size-len(s.k.incomplete())-len(markValue)-len(s.k.count())-2*opOverhead
	}
	for i, t := range chunks {
		if err := s.commit(t); err != nil {
			return err
		}
		if s.opts.OnLoad != nil {
			s.opts.OnLoad(i+1, len(chunks))
		}
	}
	s.historySeq = uint64(len(snap.History))
	// The stack holds the snapshot's records now, and only them.
	names := make(map[string]bool, len(snap.Records))
	for _, r := range snap.Records {
		names[r.Name] = true
	}
	s.knowAll(names)
	return nil
}

// Stacks returns the names of the stacks under opts.Prefix on the cluster
// opts names, sorted, read at one revision. opts.Stack and the fields of
// state.Options are ignored.
func Stacks(ctx context.Context, opts Options) ([]string, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("list stacks %s: %w", opts, err)
	}
	where := fmt.Sprintf("etcd://%s%s", endpoints(opts.Endpoints), opts.Prefix)
	cli, watch, err := connect(opts)
	if err != nil {
		return nil, advise(fmt.Errorf("list stacks %s: %w", where, err))
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
	defer cancel()
	prefix := opts.Prefix + "/"
	var (
		stacks []string
		rev    int64
	)
	// Skip from one stack's keys to the next's: a stack's keys all start
	// with "<name>/", and "<name>0" is the first key past them.
	for start := prefix; ; {
		ropts := []clientv3.OpOption{clientv3.WithRange(prefixEnd(prefix)), clientv3.WithKeysOnly(), clientv3.WithLimit(1)}
		if rev > 0 {
			ropts = append(ropts, clientv3.WithRev(rev))
		}
		resp, err := cli.Get(ctx, start, ropts...)
		if err != nil {
			return nil, advise(watch.explain(cleanErr(fmt.Errorf("list stacks %s: %w", where, err), opts), opts))
		}
		rev = resp.Header.Revision
		if len(resp.Kvs) == 0 {
			slices.Sort(stacks)
			return stacks, nil
		}
		rest := string(resp.Kvs[0].Key)[len(prefix):]
		name, _, nested := strings.Cut(rest, "/")
		if !nested {
			start = string(resp.Kvs[0].Key) + "\x00"
			continue
		}
		format := keys{base: prefix + name + "/"}.format()
		got, err := cli.Get(ctx, format, clientv3.WithRev(rev), clientv3.WithCountOnly())
		if err != nil {
			return nil, cleanErr(fmt.Errorf("list stacks %s: %w", where, err), opts)
		}
		if got.Count > 0 && checkStack(name) == nil {
			stacks = append(stacks, name)
		}
		start = prefix + name + "0" // '0' follows '/'
	}
}
