package state

import "fmt"

// Backend is a state as the engine reads and writes it: a Store, the
// model over any kv backend (or etcdstate.Store), with one set of
// guarantees. Every write is durable when it returns, and
// concurrent writes may be coalesced. Errors wrap the sentinels of package
// state (ErrNoRecord, ErrReadOnly, ErrCorrupt, ...).
type Backend interface {
	// Meta returns the lineage, serial and format of the state.
	Meta() (Meta, error)
	// SecretKey returns the state's key for digests of secrets and for
	// signing plan files. It never changes for the life of the state.
	SecretKey() ([]byte, error)
	// List returns every record, sorted by name.
	List() ([]Record, error)
	// Get returns the record named name, and whether there is one.
	Get(name string) (Record, bool, error)
	// Put stores r as the current version of its record, bumping the
	// serial, and returns it with its serial and time set.
	Put(r Record) (Record, error)
	// PutAndClearIntent stores r as Put does and removes the intent named
	// r.Name, if any, in the same write.
	PutAndClearIntent(r Record) (Record, error)
	// Delete removes the record name, keeping a tombstone version.
	Delete(name string) error
	// Intents returns the intents recorded before creates, sorted by name.
	Intents() ([]Intent, error)
	// PutIntent records an intent before a create.
	PutIntent(in Intent) error
	// ClearIntent removes the intent name; nothing to clear is no error.
	ClearIntent(name string) error
	// AddHistory appends an entry to the history of applies.
	AddHistory(e HistoryEntry) error
	// Outputs returns the stack outputs last recorded, and whether any
	// were.
	Outputs() (Outputs, bool, error)
	// PutOutputs records the stack outputs in place of those recorded
	// before, without changing the serial.
	PutOutputs(o Outputs) error
	// RewriteVersions rewrites the current record of name and every
	// version kept of it, in one change, without bumping the serial.
	RewriteVersions(name string, fn func(Record) (Record, bool)) error
	// ReadOnly reports whether writes are refused.
	ReadOnly() bool
	// Lost is closed once the store's lock is lost (on etcd: its lease
	// expired, or another holder took it); every write fails from then
	// on. A local file's lock is never lost.
	Lost() <-chan struct{}
	// RecordLimit returns the largest record the backend can write in one
	// Put or PutAndClearIntent, which write it in one transaction with
	// its version. A larger one is refused with an error wrapping
	// ErrTooLarge: callers check with CheckRecordSize before they make in
	// the cloud what they could not record.
	RecordLimit() RecordLimit
	// Held returns nil while the lock is surely still this store's, and an
	// error wrapping ErrLockLost once it is lost or may have lapsed. Apply
	// checks it right before each request that changes the cloud (each
	// attempt, each step of a read-modify-write), which no state write can
	// fence. It must be cheap and safe for concurrent use.
	Held() error
}

var _ Backend = (*Store)(nil)

// View is what planning and drift start from: the state's lineage and
// serial, its records sorted by name (Record, or LazyRecord), and its key.
type View[R any] struct {
	Meta    Meta
	Records []R
	Key     []byte
}

// ReadView reads the View of b; an error says the state could not be read.
func ReadView(b Backend) (View[Record], error) {
	return readView(b, b.List)
}

// ReadLazyView reads the View of b with its records lazy (see LazyRecord):
// what planning starts from. listed, when not nil, are the records as
// ListLazy listed them already, and are not listed again.
func ReadLazyView(b Backend, listed []LazyRecord) (View[LazyRecord], error) {
	return readView(b, func() ([]LazyRecord, error) {
		if listed != nil {
			return listed, nil
		}
		return ListLazy(b)
	})
}

// readView reads the meta and key of b, and its records with list.
func readView[R any](b Backend, list func() ([]R, error)) (View[R], error) {
	var v View[R]
	var err error
	if v.Meta, err = b.Meta(); err != nil {
		return v, fmt.Errorf("read state: %w", err)
	}
	if v.Records, err = list(); err != nil {
		return v, fmt.Errorf("read state: %w", err)
	}
	if v.Key, err = b.SecretKey(); err != nil {
		return v, fmt.Errorf("read state: %w", err)
	}
	return v, nil
}
