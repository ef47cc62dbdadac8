package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Store is one stack of a Backend. Its methods are safe for concurrent
// use.
type Store struct {
	b      *Backend
	base   string // "<prefix>/<stack>/"
	where  string // for messages
	write  bool
	rev    int64 // a reader's: the revision of its snapshot
	closed atomic.Bool

	// The lock, a writer's.
	ttl      time.Duration
	lease    clientv3.LeaseID
	lockRev  int64 // the create revision of the lock key this Store put
	lost     chan struct{}
	lostOnce sync.Once
	leaseMu  sync.Mutex
	// leaseEnd is the earliest the lease can expire unless renewed: a
	// monotonic clock reading, which goes on while the process is
	// stopped, so a process that wakes from a long stop sees it passed.
	leaseEnd time.Time
	stopBg   context.CancelFunc // stops the keep-alive and the lock watch
	bg       sync.WaitGroup
}

// Open opens stack; a writer (o.Write) takes its lock first. With o.Init,
// a stack without meta/format is made in one transaction that puts o.Init
// only while meta/format is absent: of many opening one new stack at
// once, one makes it and the others open it. A reader reads at the
// revision of its Open from then on. A stack that does not exist opens
// empty.
func (b *Backend) Open(ctx context.Context, stack string, o kv.Options) (kv.Store, error) {
	if err := checkStack(stack); err != nil {
		return nil, fmt.Errorf("open state %s: %w", b.opts, err)
	}
	s := &Store{b: b, base: b.opts.Prefix + "/" + stack + "/", where: fmt.Sprintf("%s (stack %s)", b.opts, stack),
		write: o.Write, ttl: o.LockTTL, lost: make(chan struct{})}
	if s.ttl <= 0 {
		s.ttl = DefaultLockTTL
	}
	if s.write {
		if err := s.takeLock(ctx, o); err != nil {
			return nil, err
		}
	}
	tctx, cancel := b.timeout(ctx)
	defer cancel()
	var (
		hdr *pb.ResponseHeader
		err error
	)
	switch {
	case o.Init != nil:
		var resp *clientv3.TxnResponse
		resp, err = b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(s.base+"meta/format"), "=", 0)).Then(s.ops(o.Init)...).Commit()
		if err == nil {
			hdr = resp.Header
		}
	case !s.write:
		var resp *clientv3.GetResponse
		resp, err = b.cli.Get(tctx, s.base+"meta/format", clientv3.WithCountOnly())
		if err == nil {
			hdr = resp.Header
		}
	}
	if err != nil {
		s.Close()
		return nil, s.fail("open state", err)
	}
	if !s.write {
		s.rev = hdr.Revision // a writer's views read the latest instead
	}
	return s, nil
}

// lockKey is the key of the stack's lock.
func (s *Store) lockKey() string { return s.base + "lock" }

// fence is the condition of every write: the lock key is the one this
// Store put, on its lease.
func (s *Store) fence() []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(s.lockKey()), "=", s.lockRev),
		clientv3.Compare(clientv3.LeaseValue(s.lockKey()), "=", s.lease),
	}
}

// Held returns nil while the lock is surely still this writer's, and an
// error matching kv.ErrLeaseLost once it is lost or its lease may have
// lapsed: the last renewal is older than the lease's TTL, as a process
// sees on waking from a stop (SIGSTOP, a frozen VM) that outlasted it. A
// reader's is nil.
func (s *Store) Held() error {
	if !s.write {
		return nil
	}
	if s.isLost() {
		return fmt.Errorf("state %s: %w", s.where, kv.ErrLeaseLost)
	}
	s.leaseMu.Lock()
	end := s.leaseEnd
	s.leaseMu.Unlock()
	if !time.Now().Before(end) {
		s.markLost()
		return fmt.Errorf("state %s: %w (its lease of %s was last renewed too long ago)", s.where, kv.ErrLeaseLost, s.ttl)
	}
	return nil
}

// Lost is closed once the lock is lost: its lease expired or was revoked,
// its key was deleted or taken over, a write found it so, or Held found
// the lease lapsed. A reader's never closes.
func (s *Store) Lost() <-chan struct{} { return s.lost }

func (s *Store) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

func (s *Store) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// Describe names the stack, `etcd://HOST:PORT,.../PREFIX (stack S)`.
func (s *Store) Describe() string { return s.where }

// RemoteReads is true: every read is a round trip to etcd.
func (s *Store) RemoteReads() bool { return true }

// Close releases the lock, if the Store holds it, by revoking its lease,
// which deletes the lock key at once. The Backend's connection stays
// open. Closing twice does nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) || s.lease == 0 {
		return nil
	}
	s.stopBg()
	ctx, cancel := context.WithTimeout(context.Background(), s.b.opts.RequestTimeout)
	_, err := s.b.cli.Revoke(ctx, s.lease)
	cancel()
	s.bg.Wait()
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) && !s.isLost() {
		return s.fail("release the lock of", err) // it expires after its TTL
	}
	return nil
}

// fail wraps err, of a request about the stack, with what failed and
// where, explained.
func (s *Store) fail(what string, err error) error {
	if errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("%s %s: the snapshot at revision %d was compacted away while reading; run again: %w", what, s.where, s.rev, err)
	}
	return s.b.fail(fmt.Errorf("%s %s: %w", what, s.where, err))
}

func (s *Store) errClosed() error { return fmt.Errorf("state %s is closed", s.where) }

// ops are the etcd operations of ops, on the stack's keys.
func (s *Store) ops(ops []kv.Op) []clientv3.Op {
	out := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		out[i] = clientv3.OpPut(s.base+op.Key, string(op.Value))
		if op.Delete {
			out[i] = clientv3.OpDelete(s.base + op.Key)
		}
	}
	return out
}
