package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// lock takes the stack's lock, waiting up to opts.LockTimeout while
// another holds it, and keeps it alive until Close.
func (s *Store) lock(ctx context.Context, opts kv.Options) error {
	s.ttl = opts.LockTTL
	if s.ttl <= 0 {
		s.ttl = DefaultLockTTL
	}
	holder := opts.Holder
	if holder == nil {
		holder = []byte{}
	}
	deadline := time.Now().Add(max(opts.LockTimeout, 0))
	onWait := opts.OnWait
	backoff := 25 * time.Millisecond
	for {
		asked := time.Now()
		var (
			token int64
			held  []byte
			left  time.Duration
		)
		err := s.b.retry(ctx, func(ctx context.Context) (err error) {
			token, held, left, err = s.tryLock(ctx, holder)
			return err
		})
		if err != nil {
			return fmt.Errorf("lock %s: %w", s.where, s.b.explainErr(err))
		}
		if token != 0 {
			s.token = token
			s.renewed(asked)
			bg, stop := context.WithCancel(context.Background())
			s.stopBg = stop
			s.bg.Add(1)
			go s.keepAlive(bg)
			return nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return &kv.LockedError{Where: s.where, Holder: held}
		}
		if onWait != nil {
			onWait(held)
			onWait = nil
		}
		// Poll: sooner when the lease runs out first.
		wait := min(backoff, deadline.Sub(now))
		if left >= 0 {
			wait = min(wait, left+time.Millisecond)
		}
		backoff = min(2*backoff, 500*time.Millisecond)
		if !sleep(ctx, wait) {
			return fmt.Errorf("lock %s: %w", s.where, ctx.Err())
		}
	}
}

// tryLock takes the lock if it is free or expired, raising its token, and
// returns the token. Else it returns what the holder recorded, and how long
// its lease runs by the server's clock (-1 when the lock is free now).
func (s *Store) tryLock(ctx context.Context, holder []byte) (token int64, held []byte, left time.Duration, err error) {
	err = s.b.pool.QueryRow(ctx, "INSERT INTO "+s.b.schema+`.locks AS l (stack, token, holder, expires)
		VALUES ($1, 1, $2, now() + make_interval(secs => $3))
		ON CONFLICT (stack) DO UPDATE SET token = l.token + 1, holder = EXCLUDED.holder, expires = EXCLUDED.expires
		WHERE l.expires <= now()
		RETURNING token`, s.stack, holder, s.ttl.Seconds()).Scan(&token)
	if !errors.Is(err, pgx.ErrNoRows) {
		return token, nil, 0, err
	}
	var secs float64
	err = s.b.pool.QueryRow(ctx, "SELECT holder, extract(epoch FROM expires - clock_timestamp())::float8 FROM "+s.b.schema+".locks WHERE stack = $1",
		s.stack).Scan(&held, &secs)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, -1, nil
	}
	if len(held) == 0 {
		held = nil
	}
	return 0, held, max(time.Duration(secs*float64(time.Second)), 0), err
}

// keepAlive renews the lease every third of its TTL until ctx ends, and
// marks the lock lost when a renewal finds it taken or expired, or when
// no renewal succeeded for a TTL.
func (s *Store) keepAlive(ctx context.Context) {
	defer s.bg.Done()
	every := s.ttl / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		asked := time.Now()
		rctx, cancel := context.WithTimeout(ctx, every)
		tag, err := s.b.pool.Exec(rctx, "UPDATE "+s.b.schema+`.locks SET expires = now() + make_interval(secs => $3)
			WHERE stack = $1 AND token = $2 AND expires > clock_timestamp()`, s.stack, s.token, s.ttl.Seconds())
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && tag.RowsAffected() == 1:
			s.renewed(asked)
			t.Reset(every)
		case err == nil:
			s.markLost()
			return
		case s.Held() != nil:
			return // the lease may have lapsed: lost
		default:
			t.Reset(max(every/8, 10*time.Millisecond)) // the server did not answer: try again soon
		}
	}
}

// release stops renewing the lease and lets it expire now, unless it is
// lost already.
func (s *Store) release() {
	s.stopBg()
	s.bg.Wait()
	if s.token == 0 || s.isLost() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(s.b.opts.RequestTimeout, 5*time.Second))
	defer cancel()
	s.b.pool.Exec(ctx, "UPDATE "+s.b.schema+".locks SET expires = timestamptz 'epoch' WHERE stack = $1 AND token = $2", s.stack, s.token)
}

// Held returns nil while the lease is surely still the Store's: it was
// last renewed less than its TTL ago, by this process's clock, and no
// renewal or write found it lost. A reader's returns nil.
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

// Lost is closed once the lock is lost; never for a reader.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// renewed records that the lease runs at least a TTL from at: the server
// set its expiry after at.
func (s *Store) renewed(at time.Time) {
	s.leaseMu.Lock()
	s.leaseEnd = at.Add(s.ttl)
	s.leaseMu.Unlock()
}

func (s *Store) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

func (s *Store) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }
