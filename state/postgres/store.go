package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Limits of one Write. A bytea holds up to 1 GiB, and the server takes
// messages of up to 1 GiB, in which a Write's puts travel as two array
// parameters: a value of a quarter of that, and a Write that holds it
// twice (a record and its version) and more, leave room.
const (
	maxValue = 256 << 20
	maxBatch = 640 << 20
	pageSize = 1000 // rows a Scan reads at a time
)

// snapshot is the transaction of a view.
var snapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// Store is one stack of a Backend, open for reading or for writing.
type Store struct {
	b     *Backend
	stack string
	where string // for messages

	// A reader's snapshot: one transaction on a connection of its own,
	// used by one Read at a time. absent: the schema does not exist, and
	// every view is empty.
	readMu sync.Mutex
	conn   *pgx.Conn
	snap   pgx.Tx
	absent bool

	// A writer's lock.
	write    bool
	writeMu  sync.Mutex // one Write at a time
	token    int64
	ttl      time.Duration
	leaseMu  sync.Mutex
	leaseEnd time.Time // the lease surely runs until then, by this process's clock
	lost     chan struct{}
	lostOnce sync.Once
	stopBg   context.CancelFunc
	bg       sync.WaitGroup

	closed    atomic.Bool
	closeOnce sync.Once
}

// Open opens the Store of stack: for writing, it takes the stack's lock
// first, waiting up to opts.LockTimeout. With opts.Init, it creates the
// stack, and the schema, if they do not exist. A reader of a stack that
// does not exist, or of a database without the schema, sees it empty.
func (b *Backend) Open(ctx context.Context, stack string, opts kv.Options) (kv.Store, error) {
	if !stackName.MatchString(stack) {
		return nil, fmt.Errorf("stack %q: a name holds letters, digits, '-', '_' and '.'", stack)
	}
	s := &Store{b: b, stack: stack, write: opts.Write, lost: make(chan struct{}), stopBg: func() {}}
	s.where = fmt.Sprintf("%s (stack %s)", b.where, stack)
	if opts.Write || opts.Init != nil {
		if err := b.migrate(ctx); err != nil {
			return nil, err
		}
	}
	if opts.Write {
		if err := s.lock(ctx, opts); err != nil {
			return nil, err
		}
	}
	if opts.Init != nil {
		if err := s.init(ctx, opts.Init); err != nil {
			s.Close()
			return nil, err
		}
	}
	if !opts.Write {
		if err := s.begin(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// init creates the stack with ops, in one transaction, if it holds no
// meta/format; a writer's is fenced.
func (s *Store) init(ctx context.Context, ops []kv.Op) error {
	var format []byte
	for _, op := range ops {
		if op.Key == "meta/format" && !op.Delete {
			format = op.Value
		}
	}
	if format == nil {
		return fmt.Errorf("create %s: %w: the keys of a new stack hold no meta/format", s.where, errPermanent)
	}
	puts, _ := netOps(ops)
	err := s.txn(ctx, func(ctx context.Context, tx pgx.Tx, _ bool) error {
		if s.write {
			if err := s.fence(ctx, tx); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, "INSERT INTO "+s.b.schema+".kv (stack, key, value) VALUES ($1, 'meta/format'::bytea, $2) ON CONFLICT DO NOTHING", s.stack, format)
		if err != nil || tag.RowsAffected() == 0 {
			return err // it exists
		}
		return s.put(ctx, tx, puts)
	})
	if err != nil {
		return fmt.Errorf("create %s: %w", s.where, s.b.explainErr(err))
	}
	return nil
}

// begin starts a reader's snapshot.
func (s *Store) begin(ctx context.Context) error {
	err := s.b.retry(ctx, func(ctx context.Context) error {
		conn, err := pgx.ConnectConfig(ctx, s.b.pool.Config().ConnConfig)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTx(ctx, snapshot)
		var present bool
		if err == nil {
			// The snapshot is taken at the first query: this one.
			present, err = s.b.tables(ctx, tx)
		}
		if err != nil {
			conn.Close(context.Background())
			return err
		}
		s.conn, s.snap, s.absent = conn, tx, !present
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", s.where, s.b.explainErr(err))
	}
	return nil
}

// Read runs fn with a view: of the reader's snapshot, or, for a writer, of
// what is committed now, in a REPEATABLE READ transaction of its own.
func (s *Store) Read(ctx context.Context, fn func(kv.View) error) error {
	if s.closed.Load() {
		return fmt.Errorf("read %s: %w: the store is closed", s.where, errPermanent)
	}
	if !s.write {
		s.readMu.Lock()
		defer s.readMu.Unlock()
		return fn(&view{s: s, ctx: ctx, q: s.snap})
	}
	var tx pgx.Tx
	err := s.b.retry(ctx, func(ctx context.Context) (err error) {
		tx, err = s.b.pool.BeginTx(ctx, snapshot)
		return err
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", s.where, s.b.explainErr(err))
	}
	defer tx.Rollback(context.Background())
	return fn(&view{s: s, ctx: ctx, q: tx})
}

// view reads the stack in one transaction.
type view struct {
	s   *Store
	ctx context.Context
	q   pgx.Tx
}

// fail wraps an error of the server during a read.
func (v *view) fail(err error) error {
	return fmt.Errorf("read %s: %w", v.s.where, v.s.b.explainErr(err))
}

func (v *view) Get(key string) ([]byte, error) {
	got, err := v.GetMany([]string{key})
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

func (v *view) GetMany(keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	if v.s.absent || len(keys) == 0 {
		return out, nil
	}
	values, err := v.s.getMany(v.ctx, v.q, keys)
	if err != nil {
		return nil, v.fail(err)
	}
	for i, k := range keys {
		out[i] = values[k]
	}
	return out, nil
}

// getMany returns the values of keys that have one, in one query.
func (s *Store) getMany(ctx context.Context, q querier, keys []string) (map[string][]byte, error) {
	bk := make([][]byte, len(keys))
	for i, k := range keys {
		bk[i] = []byte(k)
	}
	rows, err := q.Query(ctx, "SELECT key, value FROM "+s.b.schema+".kv WHERE stack = $1 AND key = ANY($2)", s.stack, bk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[string(k)] = v
	}
	return out, rows.Err()
}

func (v *view) Scan(prefix, after string, keysOnly bool, fn func(key string, value []byte) error) error {
	if v.s.absent {
		return nil
	}
	from := prefix // the least key to read, included
	if after >= prefix {
		from = after + "\x00"
	}
	cols := "key, value"
	if keysOnly {
		cols = "key, NULL::bytea"
	}
	sql := "SELECT " + cols + " FROM " + v.s.b.schema + ".kv WHERE stack = $1 AND key >= $2"
	args := []any{v.s.stack, nil}
	if end := prefixEnd(prefix); end != nil {
		sql += " AND key < $3"
		args = append(args, end)
	}
	sql += fmt.Sprintf(" ORDER BY key LIMIT %d", pageSize)
	type pair struct{ Key, Value []byte }
	for {
		args[1] = []byte(from)
		rows, err := v.q.Query(v.ctx, sql, args...)
		if err != nil {
			return v.fail(err)
		}
		page, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pair])
		if err != nil {
			return v.fail(err)
		}
		for _, p := range page {
			if err := fn(string(p.Key), p.Value); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		from = string(page[len(page)-1].Key) + "\x00"
	}
}

// prefixEnd returns the least key greater than every key that begins with
// prefix, or nil when there is none.
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// RemoteReads reports true: every read is a round trip to the server.
func (s *Store) RemoteReads() bool { return true }

// Limits are what one Write holds.
func (s *Store) Limits() kv.Limits {
	return kv.Limits{Bytes: maxBatch, Value: maxValue,
		Why: "PostgreSQL takes values and statements of under 1 GiB; reconcile writes values of up to 256 MiB, and up to 640 MiB at once"}
}

// Describe names the stack, without a password.
func (s *Store) Describe() string { return s.where }

// Close ends a reader's snapshot; a writer stops renewing its lock and
// releases it.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.conn != nil {
			s.readMu.Lock()
			s.conn.Close(context.Background())
			s.readMu.Unlock()
		}
		if s.write {
			s.writeMu.Lock()
			s.release()
			s.writeMu.Unlock()
		}
	})
	return nil
}
