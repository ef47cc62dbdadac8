package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// takeLock puts the lock key, holding o.Holder, on a new lease kept alive
// in the background, if no one holds it. While someone does, it waits for
// the key's deletion by watching it, up to o.LockTimeout, then returns a
// *kv.LockedError with the holder's bytes. Once it holds the lock, a
// watch of the key closes Lost when the key is deleted or taken over.
func (s *Store) takeLock(ctx context.Context, o kv.Options) error {
	deadline := time.Now().Add(max(o.LockTimeout, 0))
	gctx, cancel := s.b.timeout(ctx)
	asked := time.Now()
	lease, err := s.b.cli.Grant(gctx, int64((s.ttl+time.Second-1)/time.Second))
	cancel()
	if err != nil {
		return s.fail("lock state", fmt.Errorf("grant lease: %w", err))
	}
	s.lease = lease.ID
	s.renewed(asked, lease.TTL)
	bgCtx, stop := context.WithCancel(context.Background())
	s.stopBg = stop
	keepAlive, err := s.b.cli.KeepAlive(bgCtx, lease.ID)
	if err != nil {
		s.dropLease()
		return s.fail("lock state", fmt.Errorf("keep lease alive: %w", err))
	}
	s.bg.Go(func() {
		// Each answer extends the lease from when the server took the
		// request, which is later than the answer before (the client asks
		// again only after one). The channel closes when the lease is
		// gone, or when Close stops it.
		since := asked
		for resp := range keepAlive {
			now := time.Now()
			s.renewed(since, resp.TTL)
			since = now
		}
		if bgCtx.Err() == nil {
			s.markLost()
		}
	})

	onWait := o.OnWait
	for {
		tctx, cancel := s.b.timeout(ctx)
		resp, err := s.b.cli.Txn(tctx).
			If(clientv3.Compare(clientv3.CreateRevision(s.lockKey()), "=", 0)).
			Then(clientv3.OpPut(s.lockKey(), string(o.Holder), clientv3.WithLease(lease.ID))).
			Else(clientv3.OpGet(s.lockKey())).Commit()
		cancel()
		if err != nil {
			s.dropLease()
			return s.fail("lock state", err)
		}
		if resp.Succeeded {
			s.lockRev = resp.Header.Revision
			break
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // released meanwhile
		}
		holder := kvs[0].Value
		if !time.Now().Before(deadline) {
			s.dropLease()
			return &kv.LockedError{Where: s.where, Holder: holder}
		}
		if onWait != nil {
			onWait(holder)
			onWait = nil
		}
		if err := s.waitRelease(ctx, deadline, resp.Header.Revision); err != nil {
			s.dropLease()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				return &kv.LockedError{Where: s.where, Holder: holder}
			}
			return s.fail("lock state", err)
		}
	}
	s.bg.Go(func() {
		for resp := range s.b.cli.Watch(bgCtx, s.lockKey(), clientv3.WithRev(s.lockRev+1)) {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete || ev.Kv.CreateRevision != s.lockRev || ev.Kv.Lease != int64(s.lease) {
					s.markLost()
					return
				}
			}
			if resp.Err() != nil {
				return // the keep-alive still notices a lost lease
			}
		}
	})
	return nil
}

// waitRelease waits until the lock key, held at revision rev, is deleted,
// or deadline passes (context.DeadlineExceeded).
func (s *Store) waitRelease(ctx context.Context, deadline time.Time, rev int64) error {
	wctx, cancel := context.WithDeadline(clientv3.WithRequireLeader(ctx), deadline)
	defer cancel()
	for resp := range s.b.cli.Watch(wctx, s.lockKey(), clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if resp.Err() != nil || len(resp.Events) > 0 {
			return nil // try the lock again (and watch anew)
		}
	}
	return wctx.Err()
}

// dropLease stops keeping the lease alive and revokes it, after a failed
// takeLock.
func (s *Store) dropLease() {
	s.stopBg()
	ctx, cancel := context.WithTimeout(context.Background(), s.b.opts.RequestTimeout)
	_, _ = s.b.cli.Revoke(ctx, s.lease)
	cancel()
	s.bg.Wait()
	s.lease = 0
}

// renewed records that the lease runs at least ttl seconds from at.
func (s *Store) renewed(at time.Time, ttl int64) {
	s.leaseMu.Lock()
	s.leaseEnd = at.Add(time.Duration(ttl) * time.Second)
	s.leaseMu.Unlock()
}
