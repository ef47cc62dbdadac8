// Package kv is the small transactional store that reconcile's state model
// (package state) keeps a stack in: ordered keys and their values, read
// in consistent views, written in atomic, conditional batches, and guarded
// by a lock that fences every write. Each backend is a package that
// implements it and nothing more: state/bolt (a bbolt file per stack),
// state/etcd (a key prefix per stack on etcd) and state/postgres (a
// stack's rows in PostgreSQL). Everything a state means (records,
// versions, history, intents, serials, checks, group commit) is the
// model's; a backend knows keys and bytes.
//
// # Keys and values
//
// Keys are strings of the model's making, "/"-separated, in a few spaces:
//
//	meta/format  meta/serial  meta/lineage  meta/key  meta/count  meta/incomplete
//	outputs
//	records/NAME
//	versions/NAME\x00SERIAL          SERIAL: 20 decimal digits
//	history/SERIAL/SEQ               20 decimal digits each
//	intents/NAME
//
// NAME never holds a zero byte. A backend stores a key and its value as
// they are, or in a layout of its own that it maps to and from them one to
// one (the bbolt file keeps the buckets and binary keys of its format 2),
// and lists keys in byte order, which is numeric order for the 20-digit
// numbers. Values are opaque: the model seals each with its check.
//
// # Views and snapshots
//
// Read runs a function with a View. The views of a Store opened for
// reading only are all of one snapshot, taken at Open, whatever writers do
// meanwhile: a plan reads one consistent state. The views of a writer see
// every write committed before Read was called, its own included.
//
// # Writes
//
// Write applies a Batch atomically: all its operations or none, and only
// when each of its conditions holds (a key holds a given value, or is
// absent) and, on a backend whose lock is a lease, only while the Store
// still holds its lease, checked in the same transaction (fencing). A
// condition that fails is an error matching ErrConflict, a lease lost one
// matching ErrLeaseLost; nothing is written then.
//
// A Write that cannot tell whether it was made (the connection failed
// after the request left, the server lost its leader) is tried again until
// its context's deadline. When a condition then fails, the backend reads
// the Batch's Marker, a key it puts: holding the value the Batch puts, it
// shows that an earlier attempt was made, and the Write succeeds. When
// the deadline passes first, the error matches ErrUnknownOutcome: the
// model must read what is stored before its next write.
//
// # Locks
//
// A Store opened for writing holds the stack's write lock until Close:
// one writer at a time per stack. A local file's lock is the kernel's and
// lasts as long as the process; a shared backend's is a lease that its
// holder renews, and that expires LockTTL after the last renewal the
// server saw, so that a holder that died or was cut off frees it. Held and
// Lost say whether the lease is still the Store's. A writer that cannot
// take the lock waits up to LockTimeout, then fails with a *LockedError
// holding what the holder recorded of itself.
package kv

import (
	"context"
	"errors"
	"time"
)

// Store is one stack's keys, open for reading, or for writing under the
// stack's lock. Its methods are safe for concurrent use.
type Store interface {
	// Read runs fn with a view of the stack (see the package doc). The
	// view is valid only during fn; values it returns are the caller's.
	Read(ctx context.Context, fn func(View) error) error
	// Write applies b atomically, if its conditions hold and the Store
	// still holds its lock. A Store opened for reading only returns an
	// error matching ErrReadOnly.
	Write(ctx context.Context, b *Batch) error
	// Held returns nil while the Store's lock is surely still its own,
	// and an error matching ErrLeaseLost once it is lost or may have
	// lapsed (its last renewal is older than its TTL). It is cheap, safe
	// for concurrent use, and nil for a Store opened for reading only.
	Held() error
	// Lost is closed once the Store's lock is lost: never, for a local
	// file's, or for a Store opened for reading only.
	Lost() <-chan struct{}
	// Limits are what one Write may hold.
	Limits() Limits
	// Describe names the stack for messages, without any credential, e.g.
	// `etcd://10.0.0.5:2379/reconcile/acme (stack prod)`.
	Describe() string
	// Close releases the lock, if held, and the Store's connections.
	// Closing twice does nothing.
	Close() error
}

// View reads the keys of a stack, as one snapshot.
type View interface {
	// Get returns the value of key, or nil when there is none.
	Get(key string) ([]byte, error)
	// GetMany returns the values of keys, in their order (nil for a key
	// with none), in as few round trips as the backend can.
	GetMany(keys []string) ([][]byte, error)
	// Scan calls fn with every key that begins with prefix and is greater
	// than after ("" for all), and its value, in key order, until fn
	// returns an error, which Scan returns. With keysOnly, fn gets no
	// values. A value fn gets may be the backend's own memory (a bbolt
	// file's mapping): it is valid until the function given to Read
	// returns, and must not be changed; a caller copies what it keeps.
	Scan(prefix, after string, keysOnly bool, fn func(key string, value []byte) error) error
}

// Batch is one atomic, conditional write.
type Batch struct {
	// Conds must all hold for the batch to be written.
	Conds []Cond
	// Ops are the puts and deletes, applied in order.
	Ops []Op
	// Marker, when not empty, is the key of a put among Ops whose value
	// no other write puts there: see the package doc.
	Marker string
}

// Put adds a put of value at key to b.
func (b *Batch) Put(key string, value []byte) { b.Ops = append(b.Ops, Op{Key: key, Value: value}) }

// Delete adds a delete of key to b.
func (b *Batch) Delete(key string) { b.Ops = append(b.Ops, Op{Key: key, Delete: true}) }

// Expect adds the condition that key holds value (nil: that key is
// absent).
func (b *Batch) Expect(key string, value []byte) {
	b.Conds = append(b.Conds, Cond{Key: key, Value: value})
}

// Size is what b adds to a write, for Limits: its keys and values.
func (b *Batch) Size() int {
	n := 0
	for _, op := range b.Ops {
		n += len(op.Key) + len(op.Value) + OpOverhead
	}
	for _, c := range b.Conds {
		n += len(c.Key) + len(c.Value) + OpOverhead
	}
	return n
}

// OpOverhead is what one operation or condition adds to the size of a
// write beyond its key and value, counted generously.
const OpOverhead = 32

// Op is a put of Value at Key, or a delete of Key.
type Op struct {
	Key    string
	Value  []byte
	Delete bool
}

// Cond is the condition that Key holds Value, or, with a nil Value, that
// Key is absent.
type Cond struct {
	Key   string
	Value []byte
}

// Limits are what one Write of a backend may hold.
type Limits struct {
	// Ops is the most operations and conditions a Write holds; 0 for no
	// limit.
	Ops int
	// Bytes is the most bytes of keys and values (Batch.Size) a Write
	// holds; 0 for no limit.
	Bytes int
	// Value is the largest value a put may hold.
	Value int
	// Why says where the limits come from, for an error about a record
	// that does not fit, e.g. "etcd takes requests of up to 1.5 MiB (its
	// --max-request-bytes)".
	Why string
}

// Options say how to open a stack's Store.
type Options struct {
	// Write opens the Store for writing: it takes the stack's lock first.
	// Without it every Write fails with ErrReadOnly, and reads are of one
	// snapshot.
	Write bool
	// Init, when not nil, creates the stack if it does not exist, holding
	// these puts, atomically: no Store of the stack ever sees part of
	// them. A stack that exists (one that holds meta/format) is left as it
	// is. Without Init, opening a stack that does not exist succeeds (its
	// views are empty) on a shared backend; a local one fails with an
	// error matching ErrNotFound.
	Init []Op
	// LockTTL is how long a lease outlives its holder's last renewal (a
	// shared backend's lock); zero means the backend's default.
	LockTTL time.Duration
	// LockTimeout is how long to wait for the lock another process holds;
	// zero or less means try once. A local file's readers wait too, for a
	// writer.
	LockTimeout time.Duration
	// Holder is what the Store records of its process while it holds the
	// lock, for others to see; opaque to the backend.
	Holder []byte
	// OnWait, when set, is called once when Open starts to wait for the
	// lock, with what the holder recorded (nil when unknown).
	OnWait func(holder []byte)
}

// Backend is where the stacks of one project live: a directory of bbolt
// files, a key prefix on etcd, a PostgreSQL database. Its methods are
// safe for concurrent use.
type Backend interface {
	// Open opens the Store of stack (a name of letters, digits, '-', '_'
	// and '.').
	Open(ctx context.Context, stack string, opts Options) (Store, error)
	// Stacks lists the stacks that exist, sorted.
	Stacks(ctx context.Context) ([]string, error)
	// Remove deletes every key of stack, atomically, taking its lock first
	// (waiting up to timeout). Removing a stack that does not exist is no
	// error.
	Remove(ctx context.Context, stack string, timeout time.Duration) error
	// Shared reports whether runners on other machines share the backend
	// (etcd, PostgreSQL), as opposed to a file of this machine's.
	Shared() bool
	// Describe names the backend for messages, without credentials.
	Describe() string
	// Close releases the backend's connections.
	Close() error
}

// Releaser is a Store that can hand the memory its reads mapped back to
// the kernel (a bbolt file's mapping), as the model asks after it read
// every record, and every so many writes.
type Releaser interface {
	Release()
}

// RemoteReads is a Store whose every read is a round trip to a server:
// the model keeps what it read rather than read it again.
type RemoteReads interface {
	RemoteReads() bool
}

// Errors of the backends. Each is wrapped with what failed and why.
var (
	// ErrReadOnly: a Write on a Store opened for reading only.
	ErrReadOnly = errors.New("the state is open for reading only")
	// ErrConflict: a condition of a Batch did not hold; nothing was
	// written.
	ErrConflict = errors.New("the state changed under the write")
	// ErrLeaseLost: the Store's lock is lost, or may have lapsed; nothing
	// was written, and no Write will be.
	ErrLeaseLost = errors.New("the state's lock was lost")
	// ErrUnknownOutcome: a Write that may or may not have been made.
	ErrUnknownOutcome = errors.New("whether the write was made is not known")
	// ErrNotFound: a local stack that does not exist, opened without Init.
	ErrNotFound = errors.New("no such stack")
	// ErrTooLarge: a Batch or value beyond the backend's Limits; nothing
	// was written.
	ErrTooLarge = errors.New("too large for one write of the backend")
	// ErrCorrupt: what the backend holds is not a store it can read (a
	// file that is not a bbolt file, a damaged one).
	ErrCorrupt = errors.New("not a readable store")
	// ErrNewerSchema: the backend was set up by a newer reconcile (a
	// PostgreSQL schema of a later version).
	ErrNewerSchema = errors.New("set up by a newer reconcile")
	// ErrUnreachable: no server of the backend answers.
	ErrUnreachable = errors.New("the state's server does not answer")
)

// LockedError is returned by Open when another process held the lock for
// longer than Options.LockTimeout. Holder is what that process recorded
// (Options.Holder), nil when unknown.
type LockedError struct {
	Where  string
	Holder []byte
}

func (e *LockedError) Error() string { return "the state " + e.Where + " is locked by another process" }
