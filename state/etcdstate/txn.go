package etcdstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/reconcile-dev/reconcile/state"
)

// opOverhead is what one operation adds to a request beyond its key and
// value, counted generously: field tags, lengths, the lease.
const opOverhead = 32

// txn is one write: operations conditional on this Store still holding
// the lock, and, when they change the serial, on the serial being what
// the Store last wrote.
type txn struct {
	ops  []clientv3.Op
	size int // bytes of keys and values, plus opOverhead per op
	// serial is the serial after the write; the Store's serial if it
	// changes none.
	serial int64
	// cmps are conditions beyond the lock and the serial.
	cmps []clientv3.Cmp
	// marker, when not empty, is a key the write puts with markerValue,
	// by which a retry tells that an earlier attempt was made. The serial
	// key serves for writes that change the serial.
	marker      string
	markerValue []byte
	// after, if set, runs once the write is made, under txMu.
	after func()

	// delta is how many records the write adds, less those it removes;
	// when countSet, count is how many records the stack holds after it,
	// whatever it held before (a Load). A write that changes the serial,
	// or sets the count, writes the record count (state.EncodeCount).
	delta    int64
	count    int64
	countSet bool
	// exists says, of the records the write puts or deletes, whether they
	// exist after it.
	exists map[string]bool
}

// setExists notes in t that the record name exists after it, or not.
func (t *txn) setExists(name string, ok bool) {
	if t.exists == nil {
		t.exists = map[string]bool{}
	}
	t.exists[name] = ok
}

// put adds a put of value at key.
func (t *txn) put(key string, value []byte) {
	t.ops = append(t.ops, clientv3.OpPut(key, string(value)))
	t.size += len(key) + len(value) + opOverhead
}

// del adds a delete of key.
func (t *txn) del(key string) {
	t.ops = append(t.ops, clientv3.OpDelete(key))
	t.size += len(key) + opOverhead
}

// fits reports whether t, with the puts of the serial and the record count
// it may add, is within the server's limits.
func (s *Store) fits(t *txn) bool {
	return len(t.ops)+2 <= s.opts.MaxTxnOps && t.size+len(s.k.serial())+len(s.k.count())+36+2*opOverhead <= s.opts.MaxRequestBytes-4096
}

// errTooLarge is the cause of a write that no transaction can hold.
var errTooLarge = errors.New("too large for one etcd transaction")

// tooLarge returns the error for t, which does not fit. It wraps
// state.ErrTooLarge.
func (s *Store) tooLarge(t *txn) error {
	return fmt.Errorf("%w: %w: %d operations of %d bytes, the server takes %d operations and %d bytes (raise its --max-txn-ops, --max-request-bytes and Options.MaxTxnOps, MaxRequestBytes)",
		state.ErrTooLarge, errTooLarge, len(t.ops)+2, t.size, s.opts.MaxTxnOps, s.opts.MaxRequestBytes)
}

// keyReserve is the room RecordLimit leaves in a transaction for what a
// record's write holds besides the record and its version: their keys
// (with names of up to 1 KiB), the intent's delete, the serial and the
// record count, and what each operation adds.
const keyReserve = 4096

// RecordLimit returns the largest record the Store can write: a record's
// write is one transaction holding the record and its version, so half of
// what the server takes in one request (Options.MaxRequestBytes, etcd's
// --max-request-bytes, 1.5 MiB by default) less what the transaction holds
// besides: about 764 KiB by default.
func (s *Store) RecordLimit() state.RecordLimit { return s.opts.RecordLimit() }

// RecordLimit returns the RecordLimit of a Store opened with o, as
// Store.RecordLimit says, without opening one: what a plan of a stack
// that does not exist yet checks its records against.
func (o Options) RecordLimit() state.RecordLimit {
	req := o.MaxRequestBytes
	if req <= 0 {
		req = DefaultMaxRequestBytes
	}
	return state.RecordLimit{
		Bytes: (req - 4096 - keyReserve) / 2,
		Why: fmt.Sprintf("each write stores a record twice, as the record and as its version, in one etcd transaction, and etcd takes requests of up to %s (its --max-request-bytes)",
			state.FormatSize(req)),
	}
}

// errStale says that the serial changed under the Store, which read it
// again: the write must be built again.
var errStale = errors.New("state serial changed under the lock")

// checkWrite returns the error for a write to s now, or nil.
func (s *Store) checkWrite() error {
	switch {
	case s.readOnly:
		return state.ErrReadOnly
	case s.closed.Load():
		return s.errClosed()
	case s.isLost():
		return state.ErrLockLost
	}
	return nil
}

// prepare readies s for a write; the caller holds txMu. After a write
// whose outcome was unknown, it reads the serial and history anew.
func (s *Store) prepare() error {
	if err := s.checkWrite(); err != nil {
		return err
	}
	if s.unsure {
		return s.refresh(context.Background())
	}
	return nil
}

// commit runs t as one etcd transaction, conditional on s holding the lock
// and, if t changes the serial, on the serial key being as s last wrote
// it. The caller holds txMu. While the cluster cannot answer (it elects a
// leader, a member died), commit tries again, up to RequestTimeout, and
// tells an earlier attempt that was made from one that was not by the
// marker. It returns an error wrapping state.ErrLockLost if the lock is
// no longer s's, and errStale if the serial changed under s.
func (s *Store) commit(t *txn) error {
	ops := t.ops
	cmps := append([]clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(s.k.lock()), "=", s.lockRev),
		clientv3.Compare(clientv3.LeaseValue(s.k.lock()), "=", s.lease),
	}, t.cmps...)
	marker, markerValue := t.marker, t.markerValue
	if t.serial != s.serial || t.countSet {
		// The record count, in the write that changes the records.
		count, err := s.countAfter(t)
		if err != nil {
			return err
		}
		ops = append(ops[:len(ops):len(ops)], clientv3.OpPut(s.k.count(), string(state.EncodeCount(count, t.serial))))
		t.count, t.countSet = count, true
	}
	if t.serial != s.serial {
		v := state.EncodeSerial(t.serial)
		ops = append(ops, clientv3.OpPut(s.k.serial(), string(v)))
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.k.serial()), "=", s.serialRev))
		marker, markerValue = s.k.serial(), v
	}
	elseOps := []clientv3.Op{clientv3.OpGet(s.k.lock()), clientv3.OpGet(s.k.serial())}
	if marker != "" && marker != s.k.serial() {
		elseOps = append(elseOps, clientv3.OpGet(marker))
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	defer cancel()
	tried := false // an earlier attempt may have been made
	backoff := 25 * time.Millisecond
	for {
		resp, err := s.cli.Txn(ctx).If(cmps...).Then(ops...).Else(elseOps...).Commit()
		if err != nil && (errors.Is(err, rpctypes.ErrRequestTooLarge) || rpctypes.Error(err) == rpctypes.ErrRequestTooLarge) {
			// Refused whole: nothing was written.
			return fmt.Errorf("write state %s: %w: the server refused %d bytes (%v): its --max-request-bytes is below the %s this client writes up to; raise it",
				s.location, state.ErrTooLarge, t.size, err, state.FormatSize(s.opts.MaxRequestBytes))
		}
		if err != nil {
			if ctx.Err() != nil || !retryable(err) {
				s.unsure = true
				return s.errorf("write state %s: %w", s.location, err)
			}
			tried = true
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				s.unsure = true
				return s.errorf("write state %s: %w", s.location, err)
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		if resp.Succeeded {
			s.done(t, resp.Header.Revision)
			return nil
		}
		// A condition failed: find out which.
		lock := resp.Responses[0].GetResponseRange().Kvs
		if len(lock) == 0 || lock[0].CreateRevision != s.lockRev || lock[0].Lease != int64(s.lease) {
			s.markLost()
			return state.ErrLockLost
		}
		serialKV := resp.Responses[1].GetResponseRange().Kvs
		if tried && marker != "" {
			kvs := serialKV
			if marker != s.k.serial() {
				kvs = resp.Responses[2].GetResponseRange().Kvs
			}
			if len(kvs) > 0 && bytes.Equal(kvs[0].Value, markerValue) {
				// An earlier attempt was made: under the lock, no one
				// else writes.
				s.done(t, kvs[0].ModRevision)
				return nil
			}
		}
		// The serial, or another condition, changed under us: read
		// everything the Store mirrors anew, and build the write again.
		if err := s.refresh(ctx); err != nil {
			return err
		}
		return errStale
	}
}

// done records in s what the transaction t, made at revision rev, wrote.
func (s *Store) done(t *txn, rev int64) {
	if t.serial != s.serial {
		s.serial, s.serialRev = t.serial, rev
	}
	if t.countSet {
		s.count, s.countKnown = t.count, true
	}
	s.noteWrite(rev, t.exists)
	if t.after != nil {
		t.after()
	}
}

// retryable reports whether err, from a transaction, may go away if it is
// tried again: the cluster has no leader or is electing one, or the
// connection failed.
func retryable(err error) bool {
	for _, e := range []error{rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrTimeout,
		rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost, rpctypes.ErrTooManyRequests} {
		if errors.Is(err, e) || rpctypes.Error(err) == e {
			return true
		}
	}
	switch status.Code(err) {
	case codes.Unavailable:
		return true
	}
	return false
}

// write runs a write that is not coalesced: it builds the transaction
// with build and commits it, building it again if the serial changed under
// the Store. The caller must not hold txMu.
func (s *Store) write(build func() (*txn, error)) error {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	for attempt := 0; ; attempt++ {
		if err := s.prepare(); err != nil {
			return err
		}
		t, err := build()
		if err != nil {
			return err
		}
		if t == nil {
			return nil // nothing to write
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
