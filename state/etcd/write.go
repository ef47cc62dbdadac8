package etcd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/reconcile-dev/reconcile/state/kv"
)

const (
	// requestSlack is what a write's request holds besides its operations
	// and conditions as Limits count them: its header (with the user
	// name) and the gets of its else branch.
	requestSlack = 1024
	// recordReserve is the room Limits.Value leaves in a write for what a
	// record's write holds besides the record and its version: their keys
	// (with names of up to 1 KiB), the serial, the record count, an
	// intent's delete and the conditions.
	recordReserve = 4096
)

// Limits are those of one etcd transaction (Options.MaxTxnOps and
// MaxRequestBytes, etcd's --max-txn-ops and --max-request-bytes), less
// what this Store adds to each write: two conditions of its lock, and the
// stack's key prefix on every key.
//
// Value is not what one put alone could hold: it is the largest value
// such that a write of two values of that size, and a few keys besides,
// fits one transaction, for the model writes each record twice, as the
// record and as its version, in one write. It is half of MaxRequestBytes
// less 8 KiB (764 KiB by default), as etcd's record limit always was, but
// that every byte of "<prefix>/<stack>/" past 23 takes 64 bytes off it,
// so that Bytes always holds such a write. A put of a larger value is
// refused, whatever it is.
func (s *Store) Limits() kv.Limits {
	o := s.b.opts
	ops := max(o.MaxTxnOps-2, 1)
	size := o.MaxRequestBytes - requestSlack - 2*(len(s.lockKey())+kv.OpOverhead) - ops*len(s.base)
	return kv.Limits{
		Ops:   ops,
		Bytes: size,
		Value: min((o.MaxRequestBytes-2*recordReserve)/2, (size-recordReserve)/2),
		Why: fmt.Sprintf("each write stores a record twice, as the record and as its version, in one etcd transaction, and etcd takes requests of up to %s (its --max-request-bytes)",
			formatSize(o.MaxRequestBytes)),
	}
}

// formatSize writes n bytes in KiB or MiB, as package state does.
func formatSize(n int) string {
	f, unit := float64(n)/1024, " KiB"
	if n >= 1<<20 {
		f, unit = f/1024, " MiB"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + unit
}

// tooLarge returns the error of a write that does not fit, or nil.
func (s *Store) tooLarge(b *kv.Batch) error {
	l := s.Limits()
	if n, size := len(b.Ops)+len(b.Conds), b.Size(); n > l.Ops || size > l.Bytes {
		return fmt.Errorf("write %s: %w: %d operations of %d bytes, one etcd transaction holds %d and %d bytes here "+
			"(raise the server's --max-txn-ops and --max-request-bytes, and MaxTxnOps and MaxRequestBytes)", s.where, kv.ErrTooLarge, n, size, l.Ops, l.Bytes)
	}
	for _, op := range b.Ops {
		if !op.Delete && len(op.Value) > l.Value {
			return fmt.Errorf("write %s: %w: the value of %q is %d bytes, more than the %d a value can take (%s)", s.where, kv.ErrTooLarge, op.Key, len(op.Value), l.Value, l.Why)
		}
	}
	return nil
}

// Write commits b as one etcd transaction, conditional on the lock key
// being this Store's and on b's conditions (a value compared; an absent
// key is one of create revision 0). While the cluster cannot answer (it
// elects a leader, a member died, the connection broke), Write tries
// again until ctx's deadline, or Options.RequestTimeout after its call if
// ctx has none. When a condition fails after an attempt whose answer was
// lost, the value of b.Marker tells whether that attempt was made; without
// a marker, or when the deadline passes first, the error matches
// kv.ErrUnknownOutcome.
func (s *Store) Write(ctx context.Context, b *kv.Batch) error {
	switch {
	case s.closed.Load():
		return s.errClosed()
	case !s.write:
		return fmt.Errorf("write %s: %w", s.where, kv.ErrReadOnly)
	case s.isLost():
		return fmt.Errorf("write %s: %w: another runner may hold it", s.where, kv.ErrLeaseLost)
	}
	if err := s.tooLarge(b); err != nil {
		return err
	}
	cmps := s.fence()
	for _, c := range b.Conds {
		if c.Value == nil {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(s.base+c.Key), "=", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.Value(s.base+c.Key), "=", string(c.Value)))
		}
	}
	var marker []byte // the value b puts at b.Marker, if any
	for _, op := range b.Ops {
		if b.Marker != "" && op.Key == b.Marker {
			marker = nil
			if !op.Delete {
				marker = value(op.Value)
			}
		}
	}
	els := []clientv3.Op{clientv3.OpGet(s.lockKey())}
	if marker != nil {
		els = append(els, clientv3.OpGet(s.base+b.Marker))
	}
	ops := s.ops(b.Ops)

	ctx, cancel := s.b.timeout(ctx)
	defer cancel()
	tried := false // an earlier attempt may have been made
	backoff := 25 * time.Millisecond
	for {
		resp, err := s.b.cli.Txn(ctx).If(cmps...).Then(ops...).Else(els...).Commit()
		if err != nil {
			if refusedTooLarge(err) {
				return fmt.Errorf("write %s: %w: the server refused %d bytes (%v): its --max-request-bytes or --max-txn-ops is below the %s and %d operations this client writes up to; raise them, or lower MaxRequestBytes and MaxTxnOps",
					s.where, kv.ErrTooLarge, b.Size(), err, formatSize(s.b.opts.MaxRequestBytes), s.b.opts.MaxTxnOps)
			}
			tried = tried || ambiguous(err)
			if retryable(err) && ctx.Err() == nil {
				select {
				case <-time.After(backoff):
					backoff = min(2*backoff, time.Second)
					continue
				case <-ctx.Done():
				}
			}
			if tried {
				return s.fail("write", fmt.Errorf("%w: %w", kv.ErrUnknownOutcome, err))
			}
			return s.fail("write", err)
		}
		if resp.Succeeded {
			return nil
		}
		if tried && marker != nil {
			if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 && bytes.Equal(kvs[0].Value, marker) {
				return nil // an earlier attempt was made: under the lock, no one else puts this
			}
		}
		unknown := tried && marker == nil
		lock := resp.Responses[0].GetResponseRange().Kvs
		if len(lock) == 0 || lock[0].CreateRevision != s.lockRev || lock[0].Lease != int64(s.lease) {
			s.markLost()
			if unknown {
				return fmt.Errorf("write %s: %w, and %w: an earlier attempt, whose answer was lost, may have been made", s.where, kv.ErrLeaseLost, kv.ErrUnknownOutcome)
			}
			return fmt.Errorf("write %s: %w: another runner may hold it", s.where, kv.ErrLeaseLost)
		}
		if unknown {
			return fmt.Errorf("write %s: %w: a condition failed after an attempt whose answer was lost, and which may have been made", s.where, kv.ErrUnknownOutcome)
		}
		return fmt.Errorf("write %s: %w", s.where, kv.ErrConflict)
	}
}

// code is the gRPC code of err, an error of the client.
func code(err error) codes.Code {
	if ee, ok := rpctypes.Error(err).(rpctypes.EtcdError); ok {
		return ee.Code()
	}
	return status.Code(err)
}

// retryable reports whether err, of a transaction, may go away if it is
// tried again: the cluster has no leader, or is too busy, or the
// connection failed.
func retryable(err error) bool {
	return code(err) == codes.Unavailable || rpctypes.Error(err) == rpctypes.ErrTooManyRequests
}

// ambiguous reports whether a transaction that failed with err may have
// been made: all but etcd's refusals.
func ambiguous(err error) bool {
	switch code(err) {
	case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.FailedPrecondition, codes.NotFound, codes.OutOfRange, codes.ResourceExhausted:
		return false
	}
	return true
}

// refusedTooLarge reports whether etcd refused a transaction, whole, as
// too large for it.
func refusedTooLarge(err error) bool {
	e := rpctypes.Error(err)
	return e == rpctypes.ErrRequestTooLarge || e == rpctypes.ErrTooManyOps ||
		code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "larger than max")
}
