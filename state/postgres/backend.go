package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// Defaults of Options and kv.Options.
const (
	DefaultSchema         = "reconcile"
	DefaultRequestTimeout = 30 * time.Second
	DefaultLockTTL        = 15 * time.Second
	connectTimeout        = "10" // seconds, unless the URL or PGCONNECT_TIMEOUT says
)

// Options say how to reach a database.
type Options struct {
	// Getenv reads libpq's variables (PGPASSWORD, PGPASSFILE, PGSSLMODE,
	// PGSSLROOTCERT, PGSSLCERT, PGSSLKEY, PGSSLPASSWORD) to fill in what the
	// URL leaves out; nil means os.Getenv. pgx reads the process's
	// environment for the others (PGHOST, PGUSER, ...).
	Getenv func(string) string
	// RequestTimeout bounds each request with its retries; zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Backend is the stacks of one schema of a PostgreSQL database.
type Backend struct {
	pool   *pgxpool.Pool
	schema string // quoted, ready for SQL
	name   string // unquoted
	where  string // the database, for messages: no password
	user   string
	opts   Options
	closed atomic.Bool
}

var (
	_ kv.Backend     = (*Backend)(nil)
	_ kv.Store       = (*Store)(nil)
	_ kv.RemoteReads = (*Store)(nil)
)

// envSettings are the libpq variables read through Options.Getenv, and
// the settings they give.
var envSettings = [][2]string{{"PGPASSWORD", "password"}, {"PGPASSFILE", "passfile"}, {"PGSSLMODE", "sslmode"},
	{"PGSSLROOTCERT", "sslrootcert"}, {"PGSSLCERT", "sslcert"}, {"PGSSLKEY", "sslkey"}, {"PGSSLPASSWORD", "sslpassword"}}

var (
	schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	stackName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)
)

// New returns the backend of the database that rawURL names, in the schema
// its schema parameter names (DefaultSchema when none). It connects on
// first use.
func New(rawURL string, opts Options) (*Backend, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("state URL %s: not a PostgreSQL URL: write postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full", redactURL(rawURL))
	}
	q := u.Query()
	pw, hasPW := u.User.Password()
	secrets := []string{pw, q.Get("password"), q.Get("sslpassword")}
	schema := cmp.Or(q.Get("schema"), DefaultSchema)
	q.Del("schema")
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("state URL %s: schema %q: write a name of lower-case letters, digits and '_', such as %q", redactURL(rawURL), schema, DefaultSchema)
	}
	for _, e := range envSettings {
		if v := opts.Getenv(e[0]); v != "" && !q.Has(e[1]) && !(e[1] == "password" && hasPW) {
			q.Set(e[1], v)
			secrets = append(secrets, v)
		}
	}
	if !q.Has("connect_timeout") && opts.Getenv("PGCONNECT_TIMEOUT") == "" {
		q.Set("connect_timeout", connectTimeout)
	}
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		msg := scrub(err.Error(), u.String(), secrets)
		if i := strings.Index(msg, "`: "); strings.HasPrefix(msg, "cannot parse `") && i > 0 {
			msg = msg[i+3:] // the URL again, as pgx read it
		}
		return nil, fmt.Errorf("state URL %s: %s", redactURL(rawURL), msg)
	}
	cfg.MaxConns = max(cfg.MaxConns, 8)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("state URL %s: %s", redactURL(rawURL), scrub(err.Error(), u.String(), secrets))
	}
	c := cfg.ConnConfig
	where := fmt.Sprintf("postgres://%s@%s:%d/%s", url.PathEscape(c.User), c.Host, c.Port, url.PathEscape(c.Database))
	if schema != DefaultSchema {
		where += "?schema=" + schema
	}
	return &Backend{pool: pool, schema: pgx.Identifier{schema}.Sanitize(), name: schema, where: where, user: c.User, opts: opts}, nil
}

// redactURL returns raw without its passwords.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://..."
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// scrub returns msg with conn, and each secret, masked.
func scrub(msg, conn string, secrets []string) string {
	msg = strings.ReplaceAll(msg, conn, redactURL(conn))
	for _, s := range secrets {
		if s != "" {
			for _, e := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
				msg = strings.ReplaceAll(msg, e, "xxxxx")
			}
		}
	}
	return msg
}

// Shared reports true: runners on other machines share a database.
func (b *Backend) Shared() bool { return true }

// Describe names the database, without a password.
func (b *Backend) Describe() string { return b.where }

// Close closes the backend's connections, after its Stores'.
func (b *Backend) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		b.pool.Close()
	}
	return nil
}

// Stacks lists the stacks that exist (those that hold meta/format),
// sorted by name.
func (b *Backend) Stacks(ctx context.Context) ([]string, error) {
	var out []string
	err := b.conn(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		out = nil
		present, err := b.tables(ctx, conn)
		if err != nil || !present {
			return err
		}
		rows, err := conn.Query(ctx, "SELECT stack FROM "+b.schema+".kv WHERE key = 'meta/format'::bytea")
		if err == nil {
			out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return nil, b.explain("list the stacks of", err)
	}
	slices.Sort(out)
	return out, nil
}

// Remove deletes every key of stack in one transaction, under its lock,
// waiting up to timeout for it.
func (b *Backend) Remove(ctx context.Context, stack string, timeout time.Duration) error {
	// A database without reconcile's tables holds no stack: leave it so.
	var present bool
	err := b.conn(ctx, func(ctx context.Context, conn *pgxpool.Conn) (err error) {
		_, present, err = b.version(ctx, conn)
		return err
	})
	if err != nil || !present {
		return b.explain("remove stack "+stack+" of", err)
	}
	s, err := b.Open(ctx, stack, kv.Options{Write: true, LockTimeout: timeout})
	if err != nil {
		return err
	}
	defer s.Close()
	st := s.(*Store)
	err = st.txn(ctx, func(ctx context.Context, tx pgx.Tx, _ bool) error {
		if err := st.fence(ctx, tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM "+b.schema+".kv WHERE stack = $1", stack)
		return err
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", st.where, b.explainErr(err))
	}
	return nil
}

// conn runs fn with a connection of the pool, as retry does.
func (b *Backend) conn(ctx context.Context, fn func(context.Context, *pgxpool.Conn) error) error {
	return b.retry(ctx, func(ctx context.Context) error {
		conn, err := b.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		return fn(ctx, conn)
	})
}

// retry runs fn until it succeeds, fails in a way that trying again would
// not mend, or ctx ends or the RequestTimeout passes: while the server
// restarts, or a connection is lost.
func (b *Backend) retry(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.RequestTimeout)
	defer cancel()
	backoff := 25 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil || !retryable(err) || b.closed.Load() {
			return err
		}
		if !sleep(ctx, backoff) {
			return err
		}
		backoff = min(2*backoff, time.Second)
	}
}

// sleep waits for d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryable reports whether err may go away if the request is made again:
// a connection that failed or could not be made, a server that shuts down
// or starts up, a transaction that lost a race.
func retryable(err error) bool {
	var dnsErr *net.DNSError
	switch code := sqlState(err); {
	case code != "":
		return strings.HasPrefix(code, "08") || // connection exception
			code == "57P01" || code == "57P02" || code == "57P03" || // shutdown, crash, starting up
			code == "40001" || code == "40P01" || code == "53300" // serialization failure, deadlock, too many connections
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return !verdict(err) // else the connection's: refused, reset, closed
}

// verdict reports whether err is this package's, rather than the server's
// or the connection's.
func verdict(err error) bool {
	var lk *kv.LockedError
	return errors.As(err, &lk) || errors.Is(err, errPermanent) || errors.Is(err, kv.ErrLeaseLost) ||
		errors.Is(err, kv.ErrConflict) || errors.Is(err, kv.ErrNewerSchema) || errors.Is(err, kv.ErrTooLarge) ||
		errors.Is(err, kv.ErrUnknownOutcome) || errors.Is(err, kv.ErrUnreachable)
}

// errPermanent marks an error that trying again would not mend.
var errPermanent = errors.New("permanent")

// sqlState returns the SQLSTATE of the server's error in err, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// explain wraps err, from doing what to the backend, as explainErr does;
// nil stays nil.
func (b *Backend) explain(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", what, b.where, b.explainErr(err))
}

// explainErr adds to err what a user can do about it, and marks a
// connection's error with kv.ErrUnreachable.
func (b *Backend) explainErr(err error) error {
	switch code := sqlState(err); {
	case code == "42501":
		return fmt.Errorf("%w (role %q lacks this privilege: a plan needs USAGE on schema %q and SELECT on its tables, an apply a role that may write them; an administrator grants them)", err, b.user, b.name)
	case code == "28P01" || code == "28000":
		return fmt.Errorf("%w (set the password with PGPASSWORD or in PGPASSFILE, ~/.pgpass by default)", err)
	case code == "3D000":
		return fmt.Errorf("%w (an administrator creates it with CREATE DATABASE)", err)
	case code == "54000":
		return fmt.Errorf("%w: %w", kv.ErrTooLarge, err)
	case code != "" || verdict(err):
		return err
	}
	return fmt.Errorf("%w: %w", kv.ErrUnreachable, err)
}
