package etcdstate

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
)

// The record count (meta/count, see state.EncodeCount) is written by every
// transaction that changes the serial, with the records it adds or removes,
// so that a record whose key someone deletes outside reconcile is missed
// when the records are next read whole: List, ListLazy and Dump compare
// how many they read with the count at the revision they read at.
//
// To write it, a writer must know whether each Put adds a record or
// replaces one. It learns which records exist from its own writes and
// reads: a List (every record), a Get, a Delete; and before a group of
// writes names a record it knows nothing of, it asks etcd, in one read for
// the group. Under the lock no one else writes, so what it learnt holds
// until a write's outcome is unknown (refresh then forgets it).

// knowledge is what a writer knows of which records exist.
type knowledge struct {
	known    map[string]bool // name: exists
	complete bool            // known names every record: a name it lacks does not exist
	rev      int64           // revision of the latest write noted
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

// noteRead notes what a read at revision rev found of the record name,
// unless this Store wrote after it.
func (s *Store) noteRead(rev int64, name string, exists bool) {
	if s.readOnly {
		return
	}
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	if rev < s.kn.rev {
		return
	}
	if s.kn.known == nil {
		s.kn.known = map[string]bool{}
	}
	s.kn.known[name] = exists
}

// noteList notes that names, read at revision rev, are every record,
// unless this Store wrote after the read.
func (s *Store) noteList(rev int64, names map[string]bool) {
	if s.readOnly {
		return
	}
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	if rev < s.kn.rev {
		return
	}
	s.kn = knowledge{known: names, complete: true, rev: rev}
}

// knowAll notes that names are every record, after a write of this
// Store that left only them.
func (s *Store) knowAll(names map[string]bool) {
	s.knownMu.Lock()
	s.kn = knowledge{known: names, complete: true, rev: s.kn.rev}
	s.knownMu.Unlock()
}

// noteWrite notes what a write of this Store, made at revision rev, left
// of the records it put or deleted.
func (s *Store) noteWrite(rev int64, exists map[string]bool) {
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	s.kn.rev = max(s.kn.rev, rev)
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

// forget drops what s knows of which records exist: a write's outcome is
// unknown.
func (s *Store) forget() {
	s.knownMu.Lock()
	s.kn = knowledge{rev: s.kn.rev}
	s.knownMu.Unlock()
}

// learn finds out, from etcd, whether the records of names that s knows
// nothing of exist. The caller holds txMu.
func (s *Store) learn(names []string) error {
	var ask []string
	for _, name := range names {
		if _, known := s.knows(name); !known && name != "" {
			ask = append(ask, name)
		}
	}
	for len(ask) > 0 {
		n := min(len(ask), s.opts.MaxTxnOps)
		ops := make([]clientv3.Op, n)
		for i, name := range ask[:n] {
			ops[i] = clientv3.OpGet(s.k.record(name), clientv3.WithCountOnly())
		}
		ctx, cancel := s.readCtx()
		resp, err := s.cli.Txn(ctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			return s.readErr("read", err)
		}
		for i, name := range ask[:n] {
			s.noteRead(resp.Header.Revision, name, resp.Responses[i].GetResponseRange().Count > 0)
		}
		ask = ask[n:]
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
		ctx, cancel := s.readCtx()
		resp, err := s.cli.Get(ctx, s.k.records(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err != nil {
			return 0, s.readErr("count records of", err)
		}
		s.count, s.countKnown = resp.Count, true
	}
	return s.count + t.delta, nil
}

// checkCount returns a *state.CountError if have, the number of records
// read at revision rev, is not the count mr read there, when that is one.
func (s *Store) checkCount(ctx context.Context, mr metaRead, have int64) error {
	if !mr.countOK || mr.count == have {
		return nil
	}
	records := map[string]bool{}
	prefix := s.k.records()
	err := s.scanAt(ctx, prefix, mr.rev, true, func(key string, _ []byte) error {
		records[key[len(prefix):]] = true
		return nil
	})
	if err != nil {
		return s.wrapRead(err)
	}
	missing, err := state.FindMissing(func(name string) bool { return records[name] },
		func(yield func(name string, serial int64, live bool) bool) error {
			return s.scanAt(ctx, s.k.versions(), mr.rev, false, func(key string, value []byte) error {
				if name, serial, ok := s.k.parseVersion(key); ok {
					_, live, err := state.DecodeVersion(name, serial, value)
					yield(name, serial, live || err != nil)
				}
				return nil
			})
		})
	if err != nil {
		return s.wrapRead(err)
	}
	return &state.CountError{Location: s.location, Have: have, Want: mr.count, Missing: missing,
		Restore: fmt.Sprintf("Restore the deleted keys under %s from a backup of etcd (etcdctl snapshot restore)", s.k.records())}
}
