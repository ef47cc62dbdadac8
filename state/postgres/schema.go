package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcile-dev/reconcile/state/kv"
)

// migrations are the steps that make the schema, in order: migrations[i]
// makes version i+1 of it. "{schema}" stands for the schema's quoted name. A step
// once released never changes: a new one is added.
var migrations = []string{
	// 1: keys and values of every stack, and their locks.
	`CREATE TABLE {schema}.migrations (
		version integer PRIMARY KEY,
		applied timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE {schema}.kv (
		stack text COLLATE "C" NOT NULL,
		key bytea NOT NULL,
		value bytea NOT NULL,
		PRIMARY KEY (stack, key)
	);
	CREATE INDEX kv_stacks ON {schema}.kv (stack) WHERE key = 'meta/format'::bytea;
	CREATE TABLE {schema}.locks (
		stack text COLLATE "C" PRIMARY KEY,
		token bigint NOT NULL,
		holder bytea NOT NULL,
		expires timestamptz NOT NULL
	);`,
}

// querier runs queries: a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// version returns the version of the schema: 0 when it, or its table of
// versions, does not exist, and whether the schema exists. It reads the
// catalog, which every role may, before the table.
func (b *Backend) version(ctx context.Context, q querier) (v int, present bool, err error) {
	var hasTable bool
	err = q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1),
		EXISTS (SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'migrations')`,
		b.name).Scan(&present, &hasTable)
	if err == nil && hasTable {
		err = q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+b.schema+".migrations").Scan(&v)
	}
	return v, present, err
}

// tables returns whether reconcile's tables exist, for a reader, and an
// error when they are of another version than this package's.
func (b *Backend) tables(ctx context.Context, q querier) (bool, error) {
	v, _, err := b.version(ctx, q)
	switch {
	case err != nil:
		return false, err
	case v > 0 && v < len(migrations):
		return false, fmt.Errorf("%w: schema %q of %s is at version %d, older than this reconcile's %d: an apply (a writer) upgrades it",
			errPermanent, b.name, b.where, v, len(migrations))
	}
	return v > 0, b.newer(v)
}

// newer returns the error for a schema at version v, if v is later than
// this package's, or nil.
func (b *Backend) newer(v int) error {
	if v <= len(migrations) {
		return nil
	}
	return fmt.Errorf("schema %q of %s is at version %d: %w, which knows up to version %d: upgrade reconcile",
		b.name, b.where, v, kv.ErrNewerSchema, len(migrations))
}

// migrate makes or upgrades the schema, in one transaction. Runners that
// migrate at once wait for each other on a transaction-level advisory
// lock, and the later ones find the work done.
func (b *Backend) migrate(ctx context.Context) error {
	err := b.conn(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		if v, _, err := b.version(ctx, conn); err != nil || v == len(migrations) {
			return err
		}
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "reconcile migrations "+b.name)
			if err != nil {
				return err
			}
			v, present, err := b.version(ctx, tx)
			if err != nil {
				return err
			} else if err := b.newer(v); err != nil {
				return err
			}
			if !present {
				// Not IF NOT EXISTS: that needs CREATE on the database
				// even when the schema exists.
				if _, err := tx.Exec(ctx, "CREATE SCHEMA "+b.schema); err != nil {
					return fmt.Errorf("create schema %q: %w", b.name, err)
				}
			}
			for i := v; i < len(migrations) && err == nil; i++ {
				if _, err = tx.Exec(ctx, strings.ReplaceAll(migrations[i], "{schema}", b.schema)); err != nil {
					return fmt.Errorf("migrate schema %q to version %d: %w", b.name, i+1, err)
				}
				_, err = tx.Exec(ctx, "INSERT INTO "+b.schema+".migrations (version) VALUES ($1)", i+1)
			}
			return err
		})
	})
	return b.explain("set up reconcile's tables in", err)
}
