package etcdstate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state"
)

// takeLock takes the stack's lock for a writer: it puts the lock key,
// recording this process as the holder, attached to a new lease kept alive
// in the background, if no one holds it. While someone does, it waits for
// the key's deletion by watching it, up to LockTimeout, and then returns a
// *state.LockedError naming the holder.
func (s *Store) takeLock(ctx context.Context) error {
	deadline := time.Now().Add(max(s.opts.LockTimeout, 0))
	ttl := int64(math.Ceil(s.opts.LockTTL.Seconds()))
	gctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	asked := time.Now()
	lease, err := s.cli.Grant(gctx, ttl)
	cancel()
	if err != nil {
		return s.errorf("lock state %s: grant lease: %w", s.location, err)
	}
	s.lease = lease.ID
	s.renewed(asked, lease.TTL)
	bgCtx, stop := context.WithCancel(context.Background())
	s.stopBg = stop
	keepAlive, err := s.cli.KeepAlive(bgCtx, lease.ID)
	if err != nil {
		s.dropLease()
		return s.errorf("lock state %s: keep lease alive: %w", s.location, err)
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// Each answer extends the lease from when the server took the
		// request, which is not known here: it is later than the answer
		// before (the client asks again only after an answer), so the
		// lease runs at least TTL from then. The channel closes when the
		// lease is gone, or when Close stops it.
		since := asked
		for resp := range keepAlive {
			now := time.Now()
			s.renewed(since, resp.TTL)
			since = now
		}
		if bgCtx.Err() == nil {
			s.markLost()
		}
	}()

	holder := string(state.EncodeHolder(state.NewHolder(s.opts.Command)))
	for {
		tctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		resp, err := s.cli.Txn(tctx).
			If(clientv3.Compare(clientv3.CreateRevision(s.k.lock()), "=", 0)).
			Then(clientv3.OpPut(s.k.lock(), holder, clientv3.WithLease(lease.ID))).
			Else(clientv3.OpGet(s.k.lock())).
			Commit()
		cancel()
		if err != nil {
			s.dropLease()
			return s.errorf("lock state %s: %w", s.location, err)
		}
		if resp.Succeeded {
			s.lockRev = resp.Header.Revision
			break
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // released meanwhile
		}
		h, _ := state.DecodeHolder(kvs[0].Value) // an unreadable holder is unknown
		if !time.Now().Before(deadline) {
			s.dropLease()
			return &state.LockedError{Path: s.location, Holder: h}
		}
		if s.opts.OnWait != nil {
			s.opts.OnWait(h)
			s.opts.OnWait = nil
		}
		if err := s.waitRelease(ctx, deadline, resp.Header.Revision); err != nil {
			s.dropLease()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return &state.LockedError{Path: s.location, Holder: h}
			}
			return s.errorf("lock state %s: %w", s.location, err)
		}
	}

	// Watch the lock key: its deletion (the lease expired or was revoked)
	// means the lock is lost, before any write finds out.
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		for resp := range s.cli.Watch(bgCtx, s.k.lock(), clientv3.WithRev(s.lockRev+1)) {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete || ev.Kv.CreateRevision != s.lockRev {
					s.markLost()
					return
				}
			}
			if resp.Err() != nil {
				return // the keep-alive still notices a lost lease
			}
		}
	}()
	return nil
}

// waitRelease waits until the lock key, held at revision rev, is deleted,
// or deadline passes (context.DeadlineExceeded).
func (s *Store) waitRelease(ctx context.Context, deadline time.Time, rev int64) error {
	wctx, cancel := context.WithDeadline(clientv3.WithRequireLeader(ctx), deadline)
	defer cancel()
	for resp := range s.cli.Watch(wctx, s.k.lock(), clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if err := resp.Err(); err != nil {
			return nil // try the lock again, and watch anew
		}
		if len(resp.Events) > 0 {
			return nil
		}
	}
	if err := wctx.Err(); err != nil {
		return err
	}
	return nil
}

// dropLease stops keeping the lease alive and revokes it, after a failed
// takeLock.
func (s *Store) dropLease() {
	s.stopBg()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	_, _ = s.cli.Revoke(ctx, s.lease)
	cancel()
	s.bg.Wait()
	s.lease = 0
}

// refresh reads the meta values and the highest history sequence number
// into the Store, checking them. The caller holds txMu.
func (s *Store) refresh(ctx context.Context) error {
	mr, err := s.readMetaFull(ctx, 0)
	if err != nil {
		return err
	}
	m, rev, serialRev := mr.Meta, mr.rev, mr.serialRev
	var seq uint64
	err = s.scanAt(ctx, s.k.history(), rev, true, func(key string, _ []byte) error {
		_, q, ok := s.k.parseHistory(key)
		if !ok {
			return fmt.Errorf("%w: bad history key %q", state.ErrCorrupt, key)
		}
		seq = max(seq, q)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read state history %s: %w", s.location, s.wrapRead(err))
	}
	s.serial, s.serialRev, s.historySeq, s.unsure = m.Serial, serialRev, seq, false
	s.count, s.countKnown = mr.count, mr.countOK
	s.forget()
	if mr.countOK && mr.count == 0 {
		// No records: none to learn of (a new stack's first apply).
		s.noteList(rev, map[string]bool{})
	}
	return nil
}

// scanAt calls fn with every key under prefix, and its value unless
// keysOnly, at revision rev, in key order, a page at a time.
func (s *Store) scanAt(ctx context.Context, prefix string, rev int64, keysOnly bool, fn func(key string, value []byte) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	end := prefixEnd(prefix)
	for start := prefix; ; {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(pageSize), clientv3.WithRev(rev)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := s.cli.Get(ctx, start, opts...)
		if err != nil {
			return err
		}
		for _, kv := range resp.Kvs {
			if err := fn(string(kv.Key), kv.Value); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
