package engine

import "reconcile/state"

// Store is the state the engine reads and writes: a local bbolt file
// (state.Store) or a stack on etcd (etcdstate.Store), with one model and
// one set of guarantees. Every write is durable when it returns, and
// concurrent writes may be coalesced. Errors wrap the sentinels of package
// state (ErrNoRecord, ErrReadOnly, ErrCorrupt, ...).
type Store interface {
	// Meta returns the lineage, serial and format of the state.
	Meta() (state.Meta, error)
	// SecretKey returns the state's key for digests of secrets and for
	// signing plan files. It never changes for the life of the state.
	SecretKey() ([]byte, error)
	// List returns every record, sorted by name.
	List() ([]state.Record, error)
	// Get returns the record named name, and whether there is one.
	Get(name string) (state.Record, bool, error)
	// Put stores r as the current version of its record, bumping the
	// serial, and returns it with its serial and time set.
	Put(r state.Record) (state.Record, error)
	// Delete removes the record name, keeping a tombstone version.
	Delete(name string) error
	// Intents returns the intents recorded before creates, sorted by name.
	Intents() ([]state.Intent, error)
	// PutIntent records an intent before a create.
	PutIntent(in state.Intent) error
	// ClearIntent removes the intent name; nothing to clear is no error.
	ClearIntent(name string) error
	// AddHistory appends an entry to the history of applies.
	AddHistory(e state.HistoryEntry) error
	// RewriteVersions rewrites the current record of name and every
	// version kept of it, in one change, without bumping the serial.
	RewriteVersions(name string, fn func(state.Record) (state.Record, bool)) error
	// ReadOnly reports whether writes are refused.
	ReadOnly() bool
}

var _ Store = (*state.Store)(nil)
