package statetest

import (
	"testing"

	"github.com/reconcile-dev/reconcile/state"
)

// Store is the method set every state backend offers, with the semantics
// package state documents for *state.Store.
type Store interface {
	Close() error
	Location() string
	ReadOnly() bool
	Lost() <-chan struct{}
	Held() error
	RecordLimit() state.RecordLimit

	Meta() (state.Meta, error)
	SecretKey() ([]byte, error)
	Get(name string) (state.Record, bool, error)
	List() ([]state.Record, error)
	Version(name string, serial int64) (state.Record, bool, error)
	History() ([]state.HistoryEntry, error)
	Intents() ([]state.Intent, error)
	Outputs() (state.Outputs, bool, error)

	Put(r state.Record) (state.Record, error)
	PutAndClearIntent(r state.Record) (state.Record, error)
	Delete(name string) error
	Rename(oldName, newName string) error
	AddHistory(e state.HistoryEntry) error
	PutIntent(in state.Intent) error
	ClearIntent(name string) error
	PutOutputs(o state.Outputs) error
	RewriteVersions(name string, fn func(state.Record) (state.Record, bool)) error

	Dump() (state.Snapshot, error)
	Load(snap state.Snapshot) error
}

// Opener opens the state of the test t with opts, as the backend's Open
// does, and closes it at the end of t. Every call with the same t opens the
// same state; a call with another t, another state, which does not exist
// until a call with opts.Create makes it.
type Opener func(t *testing.T, opts state.Options) (Store, error)

// Damager is implemented by a Store whose test can damage what it stores.
type Damager interface {
	// DamageRecord changes a byte of the stored value of the current
	// record name, under the open Store, as a disk or a hand might.
	DamageRecord(t *testing.T, name string)
}

// KeyDeleter is implemented by a Store whose test can delete a record
// behind its back.
type KeyDeleter interface {
	// DeleteRecordKey deletes the stored current record name, and only
	// it, under the open Store, as someone with write access to the store
	// (etcdctl del, bbolt's tools) might.
	DeleteRecordKey(t *testing.T, name string)
	// DeleteRecordCount deletes the record count, as a state written by a
	// reconcile that predates it is.
	DeleteRecordCount(t *testing.T)
}

// CommitObserver is implemented by a Store whose test can watch how it
// coalesces writes.
type CommitObserver interface {
	// ObserveCommits makes the Store call queued each time a caller of Put,
	// PutAndClearIntent, Delete, PutIntent or ClearIntent starts waiting for
	// a commit another caller runs, with the number now waiting, and
	// commit before each transaction of such calls, with the number of
	// calls in it, in the goroutine that runs it. Call it before any
	// write.
	ObserveCommits(queued func(n int), commit func(calls int))
}
