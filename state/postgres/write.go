package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// errMade says that an earlier attempt of a write was made, as its marker
// shows: nothing is left to do.
var errMade = errors.New("made by an earlier attempt")

// unknownCommit is the error of a COMMIT that went out and whose answer
// never came back: the transaction may or may not have been made.
type unknownCommit struct{ err error }

func (e *unknownCommit) Error() string { return e.err.Error() }
func (e *unknownCommit) Unwrap() error { return e.err }

// puts are the keys and values of a write's puts, as two arrays.
type puts struct{ keys, values [][]byte }

// netOps returns what ops do, in order: the puts and the deletes of the
// last operation on each key.
func netOps(ops []kv.Op) (puts, [][]byte) {
	last := map[string]int{}
	for i, op := range ops {
		last[op.Key] = i
	}
	var p puts
	var dels [][]byte
	for i, op := range ops {
		switch {
		case last[op.Key] != i:
		case op.Delete:
			dels = append(dels, []byte(op.Key))
		default:
			v := op.Value
			if v == nil {
				v = []byte{} // empty, not NULL
			}
			p.keys = append(p.keys, []byte(op.Key))
			p.values = append(p.values, v)
		}
	}
	return p, dels
}

// put writes p in one statement.
func (s *Store) put(ctx context.Context, tx pgx.Tx, p puts) error {
	if len(p.keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, "INSERT INTO "+s.b.schema+`.kv (stack, key, value)
		SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) AS u(k, v)
		ON CONFLICT (stack, key) DO UPDATE SET value = EXCLUDED.value`, s.stack, p.keys, p.values)
	return err
}

// Write applies b in one transaction, after checking that the Store still
// holds its lock and that b's conditions hold. It tries again, until ctx's
// deadline or the RequestTimeout, when the connection fails or the server
// restarts; when a COMMIT's answer was lost, b's Marker tells whether it
// was made.
func (s *Store) Write(ctx context.Context, b *kv.Batch) error {
	switch {
	case !s.write:
		return fmt.Errorf("write %s: %w", s.where, kv.ErrReadOnly)
	case s.closed.Load():
		return fmt.Errorf("write %s: %w: the store is closed", s.where, errPermanent)
	}
	if err := s.Held(); err != nil {
		return err
	}
	for _, op := range b.Ops {
		if len(op.Value) > maxValue {
			return fmt.Errorf("write %s: %w: the value of %q holds %d bytes, PostgreSQL's backend takes up to %d", s.where, kv.ErrTooLarge, op.Key, len(op.Value), maxValue)
		}
	}
	if n := b.Size(); n > maxBatch {
		return fmt.Errorf("write %s: %w: %d bytes, PostgreSQL's backend takes up to %d in one write", s.where, kv.ErrTooLarge, n, maxBatch)
	}
	p, dels := netOps(b.Ops)
	var marker []byte // what b puts at its Marker
	for i, k := range p.keys {
		if b.Marker != "" && string(k) == b.Marker {
			marker = p.values[i]
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err := s.txn(ctx, func(ctx context.Context, tx pgx.Tx, tried bool) error {
		// made reports whether an earlier attempt, whose COMMIT's answer
		// was lost, was made.
		made := func() bool {
			if !tried || marker == nil {
				return false
			}
			got, err := s.getMany(ctx, tx, []string{b.Marker})
			return err == nil && bytes.Equal(got[b.Marker], marker)
		}
		if err := s.fence(ctx, tx); err != nil {
			if errors.Is(err, kv.ErrLeaseLost) && made() {
				return errMade
			}
			return err
		}
		if len(b.Conds) > 0 {
			keys := make([]string, len(b.Conds))
			for i, c := range b.Conds {
				keys[i] = c.Key
			}
			got, err := s.getMany(ctx, tx, keys)
			if err != nil {
				return err
			}
			for _, c := range b.Conds {
				v, ok := got[c.Key]
				if c.Value == nil && ok || c.Value != nil && (!ok || !bytes.Equal(v, c.Value)) {
					if made() {
						return errMade
					}
					if tried && marker == nil {
						return fmt.Errorf("%w: key %q changed, and no marker tells whether by an earlier attempt", kv.ErrUnknownOutcome, c.Key)
					}
					return fmt.Errorf("%w (key %q)", kv.ErrConflict, c.Key)
				}
			}
		}
		if len(dels) > 0 {
			if _, err := tx.Exec(ctx, "DELETE FROM "+s.b.schema+".kv WHERE stack = $1 AND key = ANY($2)", s.stack, dels); err != nil {
				return err
			}
		}
		return s.put(ctx, tx, p)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", s.where, s.b.explainErr(err))
	}
	return nil
}

// fence locks the stack's lock row in tx, until tx ends, and returns an
// error matching kv.ErrLeaseLost unless it still holds the Store's token
// and has not expired. Held so, no one can take the lock before tx ends.
func (s *Store) fence(ctx context.Context, tx pgx.Tx) error {
	var token int64
	var live bool
	err := tx.QueryRow(ctx, "SELECT token, expires > clock_timestamp() FROM "+s.b.schema+".locks WHERE stack = $1 FOR UPDATE", s.stack).Scan(&token, &live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (token != s.token || !live) {
		s.markLost()
		if token != s.token {
			return fmt.Errorf("%w: another writer took it", kv.ErrLeaseLost)
		}
		return fmt.Errorf("%w: its lease of %s lapsed", kv.ErrLeaseLost, s.ttl)
	}
	return err
}

// txn runs body in a transaction and commits it, trying again while the
// server cannot be reached, until ctx's deadline or the RequestTimeout.
// body learns whether an earlier attempt's COMMIT went out without an
// answer; it returns errMade when it finds that attempt made.
func (s *Store) txn(ctx context.Context, body func(ctx context.Context, tx pgx.Tx, tried bool) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.b.opts.RequestTimeout)
	defer cancel()
	tried := false
	backoff := 25 * time.Millisecond
	var last error
	for {
		err := s.attempt(ctx, body, tried)
		var unknown *unknownCommit
		switch {
		case err == nil:
			return nil
		case errors.As(err, &unknown):
			tried = true
		case ctx.Err() == nil && !retryable(err):
			return err
		}
		last = err
		if ctx.Err() != nil || s.b.closed.Load() || !sleep(ctx, backoff) {
			break
		}
		backoff = min(2*backoff, time.Second)
	}
	if tried {
		return fmt.Errorf("%w: %w", kv.ErrUnknownOutcome, last)
	}
	return fmt.Errorf("%w: nothing was written: %w", kv.ErrUnreachable, last)
}

// attempt runs body in a transaction of its own and commits it.
func (s *Store) attempt(ctx context.Context, body func(context.Context, pgx.Tx, bool) error, tried bool) error {
	tx, err := s.b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := body(ctx, tx, tried); err != nil {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tx.Rollback(rctx)
		cancel()
		if errors.Is(err, errMade) {
			return nil
		}
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		// The server's answer that the transaction was rolled back; any
		// other error leaves it unknown.
		if code := sqlState(err); code != "" && (strings.HasPrefix(code, "40") || strings.HasPrefix(code, "23") ||
			strings.HasPrefix(code, "25") || strings.HasPrefix(code, "22")) {
			return err
		}
		return &unknownCommit{err}
	}
	return nil
}
