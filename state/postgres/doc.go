// Package postgres keeps reconcile's stacks in a PostgreSQL database: a kv
// backend (see package kv) over github.com/jackc/pgx/v5.
//
// A backend is a database, named by a URL in libpq's form
// (postgres://USER@HOST:PORT/DB?sslmode=..., or postgresql://), and a
// schema in it: reconcile, unless the URL's schema parameter names another.
// Credentials and TLS follow libpq's conventions (PGPASSWORD, PGPASSFILE,
// PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY). No message shows a
// password.
//
// The schema holds three tables, made and upgraded by versioned migrations,
// each in one transaction under a transaction-level advisory lock, so that
// runners starting at once on an empty database migrate it once:
//
//	migrations (version, applied)              the versions applied
//	kv         (stack, key, value)             one row per key of a stack
//	locks      (stack, token, holder, expires) one row per stack's lock
//
// A schema of a later version is refused (kv.ErrNewerSchema). Readers never
// make or change it: without it, every stack is absent. A reader runs one
// REPEATABLE READ READ ONLY transaction for its life, on a connection of
// its own, takes no lock, and needs SELECT only.
//
// A stack's lock is its row of locks: a fencing token, what the holder
// recorded of itself, and an expiry by the database's clock. A writer takes
// it when absent or expired, raising the token (which never goes down, so
// that a writer that lost the lock never finds its token again), renews it
// every third of its TTL, and lets it expire on Close. A writer that waits
// polls it. Every Write is one transaction that locks that row (SELECT ...
// FOR UPDATE), checks that it holds the writer's token and has not expired,
// then checks the Batch's conditions and applies its operations. No
// session-level advisory lock is held: a holder hung on an open connection
// loses the lock when it expires. A Write that loses its connection is
// tried again until its deadline; one whose COMMIT went out unanswered
// reads the Batch's Marker to tell whether it was made.
package postgres
