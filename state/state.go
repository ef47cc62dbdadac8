package state

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/reconcile-dev/reconcile/internal/intern"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state/kv"
)

// FormatVersion is the version of the file layout this package writes. Open
// refuses a file with a higher version and asks the user to upgrade, and
// upgrades a file of version 1 in place.
const FormatVersion = 2

// Errors returned by Store methods. Each is returned wrapped with the
// operation and its subject; test for it with errors.Is.
var (
	// ErrNoRecord is returned by Delete and Rename when the named record is
	// not in state, and by RewriteVersions when it has never been.
	ErrNoRecord = errors.New("no such record in state")

	// ErrExists is returned by Rename when the new name is already taken.
	ErrExists = errors.New("record already exists in state")

	// ErrReadOnly is returned by every write method of a Store opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("state is open read-only")

	// ErrCorrupt is returned by Open when the file is not a valid reconcile
	// state (empty, not a bbolt file, truncated, a bbolt file without
	// reconcile's buckets, or with a value that fails its check), and by
	// every method that meets a value that fails its check or cannot be
	// decoded. It is wrapped together with the path or the operation and
	// the cause, which names the value, e.g. `record "ep01": checksum
	// mismatch`. A file found corrupt is never written to.
	ErrCorrupt = errors.New("not a valid reconcile state file")

	// ErrNewerFormat is returned by Open when the file was written by a
	// newer reconcile, with a format version above FormatVersion.
	ErrNewerFormat = errors.New("state written by a newer reconcile")

	// ErrNoState is returned by Open when there is no state at the path and
	// Options.Create is not set. The error wrapping it reads
	// `state ".reconcile/state.db" does not exist`.
	ErrNoState = errors.New("state does not exist")

	// ErrLockLost is returned by every write of a store whose lock lapsed
	// while it was open (a lease that expired while the process was paused
	// or cut off, or was revoked), after which another process may have
	// taken the lock and written: the write was not made, and the caller
	// must stop. A local file's store never returns it: the kernel holds
	// its lock until the process exits.
	ErrLockLost = errors.New("state lock lost: another runner may hold it now; nothing more was written")

	// ErrNotEmpty is returned by Load when the state it would write into
	// already holds something that is not part of the snapshot: another
	// state, or a later one of the same lineage.
	ErrNotEmpty = errors.New("state is not empty")

	// ErrIncomplete is returned by Open for a state that a copy (Load,
	// as reconcile state migrate runs it) has begun to write and not
	// finished: it holds part of another state, and using it as a state
	// would create again every object whose record is not copied yet. It
	// is wrapped by an *IncompleteError that names the copy to run again.
	ErrIncomplete = errors.New("state is an incomplete copy")

	// ErrTooLarge is returned by a write of a record larger than its
	// backend can write at once (see Backend.RecordLimit), wrapped by a
	// *TooLargeError where the sizes are known. Nothing was written.
	ErrTooLarge = errors.New("record too large for the state backend")
)

// Record is one node in state: a managed resource, a resource read with get,
// or a lookup.
type Record struct {
	Name string `json:"name"`
	// Type is the canonical type token, e.g. "oci:AiLanguage:Endpoint".
	Type string    `json:"type"`
	Kind kind.Kind `json:"kind"`
	ID   string    `json:"id,omitempty"`
	// Inputs and Outputs are JSON-shaped and must already be redacted: the
	// state file must never hold a credential or secret value.
	Inputs  map[string]any `json:"inputs,omitempty"`
	Outputs map[string]any `json:"outputs,omitempty"`
	// Dependencies are the names of the nodes this one depends on.
	Dependencies        []string `json:"dependencies,omitempty"`
	Protect             bool     `json:"protect,omitempty"`
	RetainOnDelete      bool     `json:"retainOnDelete,omitempty"`
	DeleteBeforeReplace bool     `json:"deleteBeforeReplace,omitempty"`
	// Tainted, when not empty, says why the object is unusable (a failed
	// create); the next plan replaces it.
	Tainted string `json:"tainted,omitempty"`
	// Deposed are the ids of replaced objects whose delete has not completed.
	Deposed []string `json:"deposed,omitempty"`
	// Serial is the state serial at which this version was written. Put
	// sets it; any value passed in is ignored.
	Serial int64 `json:"serial"`
	// UpdatedAt is when this version was written, in UTC. Put sets it.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Meta identifies a state. Lineage is a random id fixed when the state file
// is first written and never changed; two files with different lineages are
// different states, not versions of one. Serial grows by one with every
// change to the records.
type Meta struct {
	Lineage       string
	Serial        int64
	FormatVersion int
}

// HistoryEntry records one apply, destroy, import or state edit.
type HistoryEntry struct {
	// Serial is the state serial after the operation.
	Serial  int64     `json:"serial"`
	Time    time.Time `json:"time"`
	Command string    `json:"command"` // e.g. "apply", "destroy", "state rm"
	Counts  Counts    `json:"counts"`
}

// Intent is recorded durably before a create, so that a crash between the
// create call and the Put of its result cannot orphan what the create made:
// the next run finds the intent and looks the object up by its token.
type Intent struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Token string `json:"token"` // idempotency token sent with the create
	// Inputs are the inputs the create was given, secrets redacted (as in
	// a Record): with them and the token, a create can be replayed.
	Inputs map[string]any `json:"inputs,omitempty"`
	Time   time.Time      `json:"time"`
	// ID is the id of the object the create made, when the create answered
	// but did not finish (it was interrupted while waiting for the object
	// to become usable); the object is then in state already.
	ID string `json:"id,omitempty"`
	// The rest of the Record the create would have written, so that an
	// object found after a crash is recorded as the create would have.
	Dependencies        []string `json:"dependencies,omitempty"`
	Protect             bool     `json:"protect,omitempty"`
	RetainOnDelete      bool     `json:"retainOnDelete,omitempty"`
	DeleteBeforeReplace bool     `json:"deleteBeforeReplace,omitempty"`
}

// Options configures Open.
type Options struct {
	// ReadOnly opens the state for reading only, as plans do: on a local
	// file, the lock is shared with other readers; on a shared backend no
	// lock is taken, and the Store reads one snapshot. Every write method
	// returns ErrReadOnly.
	ReadOnly bool
	// Create lets Open start a new, empty state when there is none, also
	// for a read-only Store of a local file (a plan may start a new
	// state). Without it, Open of a missing state returns an error
	// wrapping ErrNoState. Create never touches a state that exists.
	Create bool
	// NoCreateShared makes a read-only Store of a shared backend opened
	// with Create create nothing: a stack that does not exist is read as
	// an empty state (see Store.Absent), as a plan of a new stack reads
	// it, whose job may only read. A local file is created all the same:
	// it is the user's own, and a plan file needs the key it holds.
	NoCreateShared bool
	// LockTimeout is how long to wait while another process holds a
	// conflicting lock. Zero (or less) means try once and fail at once.
	LockTimeout time.Duration
	// LockTTL is how long the lock of a shared backend (a lease) outlives
	// its holder's last renewal; zero means the backend's default.
	LockTTL time.Duration
	// Timeout bounds each read and write of a shared backend, its retries
	// included; zero means 30 seconds.
	Timeout time.Duration
	// Command names the running command, e.g. "reconcile apply". A writer
	// records it in the lock-holder information other processes see.
	Command string
	// OnWait, when set, is called once if Open finds the lock held by
	// another process and starts waiting for it (LockTimeout is not zero),
	// with what is known of the holder, so that a command can say why it
	// waits.
	OnWait func(Holder)
	// Copy, when set, opens the state as the target of a copy (Load) of
	// the state it describes. A state Open creates is marked incomplete,
	// with Copy, in the same write that creates it, and Open accepts a
	// state so marked, to complete an interrupted copy. Load removes the
	// mark in its last write. Every Open without Copy refuses a state so
	// marked with an *IncompleteError (wrapping ErrIncomplete), whatever
	// its other options.
	Copy *CopyMark
	// OnLoad, when set, is called by Load after each write it commits,
	// with the number of writes made and their total: a copy too large
	// for one write of the backend takes several.
	OnLoad func(done, total int)
}

// defaultTimeout is Options.Timeout's default.
const defaultTimeout = 30 * time.Second

// Store is an open state: the model of package state over a stack of a
// kv backend. Its methods are safe for concurrent use. A writer holds the
// stack's lock until Close.
type Store struct {
	kv      kv.Store
	backend kv.Backend // closed with the Store when owned
	owned   bool
	where   string // the stack, as its backend describes it
	quoted  string // where, as messages name it: a local file's path quoted
	local   bool   // the backend is not shared: a file of this machine
	// remote is set for a backend whose every read is a round trip.
	remote   bool
	releaser kv.Releaser // nil unless the backend's reads map memory
	limits   kv.Limits
	timeout  time.Duration
	readOnly bool
	// absent is set for a read-only Store of a stack of a shared backend
	// that does not exist; viewKey is the random key it gives.
	absent  bool
	viewKey []byte
	closed  atomic.Bool
	copying *CopyMark // Options.Copy
	onLoad  func(done, total int)

	mu         sync.Mutex // guards queue and committing
	queue      []*call    // callers of group waiting for the next commit
	committing bool       // a caller of group is committing
	// hooks lets tests watch commits; nil otherwise.
	hooks *commitHooks
	// commits counts the writes made (each one sync of a file).
	commits atomic.Int64

	// txMu serializes writes and guards the fields below it, which mirror
	// the stack as this writer's last write left it: under its lock no
	// one else writes.
	txMu       sync.Mutex
	serial     int64
	historySeq uint64 // highest history sequence number in use, if seqKnown
	seqKnown   bool
	count      int64 // the record count, if countKnown
	countKnown bool
	unsure     bool  // a write failed without knowing whether it was made
	released   int64 // s.commits when the mapping's pages were last released

	knownMu sync.Mutex
	kn      knowledge // which records exist (see count.go)

	// prefetched holds the records Prefetch read, until List or ListLazy
	// takes them.
	prefetchMu    sync.Mutex
	prefetched    []LazyRecord
	hasPrefetched bool
}

// Prefetch reads every record of a read-only Store now, as ListLazy does,
// for the next List or ListLazy to return, and lets the kernel have a
// local file's pages back (Open's check read them all). A plan opens its
// state while the specs load, and prefetches its records then: the file's
// pages and the loaded specs are then never in memory together. A
// writable Store prefetches nothing, since its records may change; an
// error is left for the next List to find again.
func (s *Store) Prefetch() {
	if !s.readOnly {
		return
	}
	rs, err := s.ListLazy()
	if err != nil {
		return
	}
	s.prefetchMu.Lock()
	s.prefetched, s.hasPrefetched = rs, true
	s.prefetchMu.Unlock()
}

// takePrefetched returns, once, the records Prefetch read; none once the
// Store is closed.
func (s *Store) takePrefetched() ([]LazyRecord, bool) {
	s.prefetchMu.Lock()
	defer s.prefetchMu.Unlock()
	rs, ok := s.prefetched, s.hasPrefetched && !s.closed.Load()
	s.prefetched, s.hasPrefetched = nil, false
	return rs, ok
}

// Commits returns how many writes the Store has made since it was opened,
// each one sync of a local file: what group commit saves shows in it
// (see group).
func (s *Store) Commits() int64 { return s.commits.Load() }

// ObserveCommits makes the Store call queued each time a caller of Put,
// PutAndClearIntent, Delete, PutIntent or ClearIntent starts waiting for a
// write another caller makes, with the number now waiting, and commit
// before each write of such calls, with the number of calls in it. It is
// for tests; call it before any write.
func (s *Store) ObserveCommits(queued func(n int), commit func(calls int)) {
	s.hooks = &commitHooks{queued: queued, commit: commit}
}

// commitHooks are called, when set, as group groups calls.
type commitHooks struct {
	queued func(n int)     // a caller joined the queue, now n long (called under mu)
	commit func(calls int) // a write of calls calls is about to be made
}

// KV returns the stack's store under the model, for tests and tools that
// reach below it: what they write bypasses every rule of the model, and
// what the Store knows of the stack.
func (s *Store) KV() kv.Store { return s.kv }

// Close releases the lock, if held, and closes the stack. Closing a closed
// Store does nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	err := mapErr(s.kv.Close())
	if s.owned {
		err = errors.Join(err, s.backend.Close())
	}
	return err
}

// errClosed is returned by every method called after Close.
func (s *Store) errClosed() error {
	return fmt.Errorf("state %s is closed", s.quoted)
}

// Path returns where the state is, as Location does: for a local file,
// its path.
func (s *Store) Path() string { return s.where }

// Location describes where the state is, for messages: a local file's
// path, or a shared backend's stack, e.g. `etcd://host:port/prefix (stack
// S)`, without credentials.
func (s *Store) Location() string { return s.where }

// Lost returns a channel closed once the Store's lock is lost: a lease
// that lapsed, or was taken over. A local file's lock lasts as long as
// the process, so its channel never closes, nor does a reader's.
func (s *Store) Lost() <-chan struct{} { return s.kv.Lost() }

// Held returns nil while the lock is surely still this Store's, and an
// error wrapping ErrLockLost once it is lost or may have lapsed. It is
// cheap, and nil for a reader or a local file.
func (s *Store) Held() error {
	if s.readOnly {
		return nil
	}
	if err := s.kv.Held(); err != nil {
		return fmt.Errorf("state %s: %w", s.quoted, mapErr(err))
	}
	return nil
}

// ReadOnly reports whether the Store was opened with Options.ReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// KeepsValues reports whether every read of the Store is a round trip to
// a server, so that a caller should keep what it read rather than read it
// again (as a plan keeps the records' values for the apply).
func (s *Store) KeepsValues() bool { return s.remote }

// Absent reports whether the Store is a reader's of a stack of a shared
// backend that does not exist yet, opened with Options.Create and
// NoCreateShared: it reads
// as an empty state, with no lineage, serial 0, and a secret key that is
// random and dies with it (it must never sign a plan file), and nothing
// of it is written anywhere.
func (s *Store) Absent() bool { return s.absent }

// ctx returns the context of one read or write.
func (s *Store) ctx() (context.Context, context.CancelFunc) {
	if s.local {
		return context.Background(), func() {}
	}
	return context.WithTimeout(context.Background(), s.timeout)
}

// read runs fn with a view of the stack.
func (s *Store) read(fn func(vw kv.View) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return mapErr(s.kv.Read(ctx, fn))
}

// release hands the pages a local file's reads mapped back, if the
// backend can.
func (s *Store) release() {
	if s.releaser != nil && !s.closed.Load() {
		s.releaser.Release()
	}
}

// Meta returns the state's lineage, serial and format version. It returns
// an error wrapping ErrCorrupt if one of them fails its check.
func (s *Store) Meta() (Meta, error) {
	if s.absent {
		return Meta{FormatVersion: FormatVersion}, nil
	}
	var m Meta
	err := s.read(func(vw kv.View) error {
		mv, err := readMetaValues(vw)
		if err != nil {
			return err
		}
		m, err = s.metaOf(mv)
		return err
	})
	if err != nil {
		return Meta{}, fmt.Errorf("read state meta %s: %w", s.quoted, err)
	}
	return m, nil
}

// metaOf checks the meta values mv of a state of the current format, and
// returns them.
func (s *Store) metaOf(mv metaValues) (Meta, error) {
	format, err := formatOf(mv.format, !s.local)
	if err == nil && format != FormatVersion {
		err = fmt.Errorf("meta %q: format %d where %d was expected", keyFormat, format, FormatVersion)
	}
	if err != nil {
		return Meta{}, corruptData(err)
	}
	m, err := mv.meta()
	return m, corruptData(err)
}

// SecretKey returns a copy of the state's secret key: 32 random bytes made
// when the state was created (or upgraded from format 1), never changed for
// the life of the state, and kept nowhere else. Callers use it as an HMAC
// key, for digests of secret values and to sign plan files, and must never
// let it reach an error, a log or any output; no error of this package
// shows it.
func (s *Store) SecretKey() ([]byte, error) {
	if s.absent {
		return append([]byte(nil), s.viewKey...), nil
	}
	var key []byte
	err := s.read(func(vw kv.View) error {
		v, err := vw.Get(kvSecret)
		if err == nil {
			key, err = secretKeyOf(v)
			err = corruptData(err)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read state key %s: %w", s.quoted, err)
	}
	return key, nil
}

// Get returns the record named name and true, or false if there is none. It
// returns an error wrapping ErrCorrupt if the record fails its check or
// cannot be decoded.
func (s *Store) Get(name string) (Record, bool, error) {
	var v []byte
	gen := s.readGen()
	err := s.read(func(vw kv.View) error {
		var err error
		v, err = vw.Get(recordKey(name))
		return err
	})
	if err != nil {
		return Record{}, false, fmt.Errorf("get %q: %w", name, err)
	}
	s.noteRead(gen, name, v != nil)
	if v == nil {
		return Record{}, false, nil
	}
	r, err := DecodeRecord(name, v)
	if err != nil {
		return Record{}, false, fmt.Errorf("get %q: %w", name, err)
	}
	return r, true, nil
}

// List returns every record, sorted by name (byte-wise). It returns an
// error wrapping ErrCorrupt if a record fails its check or cannot be
// decoded, and a *CountError if records are missing (see CountError).
func (s *Store) List() ([]Record, error) {
	if lazy, ok := s.takePrefetched(); ok {
		return fullRecords(lazy)
	}
	return listWith(s, decodeRecordWith)
}

// fullRecords returns the whole records of lazy, decoded on every CPU.
func fullRecords(lazy []LazyRecord) ([]Record, error) {
	rs, err := decodeEach(len(lazy), func(in *intern.Table) func(i int) (Record, error) {
		return func(i int) (Record, error) { return lazy[i].Full(in) }
	})
	if err != nil {
		return nil, fmt.Errorf("list state: %w", err)
	}
	return rs, nil
}

// ListLazy returns every record as List does, each as a LazyRecord: its
// values are decoded when Full is called. Every record's check is made
// here; an error wraps ErrCorrupt as List's does.
func (s *Store) ListLazy() ([]LazyRecord, error) {
	if lazy, ok := s.takePrefetched(); ok {
		return lazy, nil
	}
	return listWith(s, decodeLazy)
}

// listWith decodes every record with decode, in order of name, read in one
// view with the record count, which they must match.
func listWith[T any](s *Store, decode func(in *intern.Table, data []byte) (T, error)) ([]T, error) {
	var (
		rs    []T
		names map[string]bool // a writer's, to know which records exist
	)
	gen := s.readGen()
	err := s.read(func(vw kv.View) error {
		var keys []string
		var values [][]byte // valid until the view ends
		err := vw.Scan(prefixRecords, "", false, func(k string, v []byte) error {
			keys, values = append(keys, k), append(values, v)
			return nil
		})
		if err != nil {
			return err
		}
		// Decoding is most of the work: on every CPU.
		rs, err = decodeEach(len(keys), func(in *intern.Table) func(i int) (T, error) {
			decodeIn := func(data []byte) (T, error) { return decode(in, data) }
			return func(i int) (T, error) {
				return readValue(bucketRecords, bytesOf(keys[i][len(prefixRecords):]), values[i], decodeIn)
			}
		})
		if err != nil {
			return corruptData(err)
		}
		if err := s.checkCount(vw, int64(len(keys))); err != nil {
			return err
		}
		if !s.readOnly {
			names = make(map[string]bool, len(keys))
			for _, k := range keys {
				names[k[len(prefixRecords):]] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list state: %w", err)
	}
	s.noteList(gen, names)
	s.release()
	return rs, nil
}

// decodeEach decodes n records on every CPU: each worker gets from
// worker, given an intern.Table of its own (the records of a worker share
// their common strings), the function that decodes record i. It returns
// the records in order, nil for none, or the first error in order, as
// decoding one by one would.
func decodeEach[T any](n int, worker func(in *intern.Table) func(i int) (T, error)) ([]T, error) {
	rs := make([]T, n)
	errs := make([]error, n)
	inParallel(n, func(lo, hi int) {
		decode := worker(intern.New())
		for i := lo; i < hi; i++ {
			rs[i], errs[i] = decode(i)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if n == 0 {
		return nil, nil
	}
	return rs, nil
}

// inParallel splits [0, n) into as many ranges as there are CPUs, calls
// fn(lo, hi) for each on a goroutine of its own, and returns when all calls
// have; when n is too small for that to pay, it calls fn(0, n) itself.
func inParallel(n int, fn func(lo, hi int)) {
	const minPerWorker = 256
	workers := min(runtime.GOMAXPROCS(0), n/minPerWorker)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w*n/workers, (w+1)*n/workers) })
	}
	wg.Wait()
}

// bytesOf returns the bytes of s, without a copy: they must not be
// changed.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// errStop ends a Scan early.
var errStop = errors.New("stop")

// Version returns the record named name as it stood at serial: the latest
// version written at or before serial, and true. It returns false if the
// record did not exist at serial, either because it was not yet written or
// because it had been deleted (or renamed away) by then. Every version is
// kept, so any serial of the state's life can be asked for. It returns an
// error wrapping ErrCorrupt if that version fails its check or cannot be
// decoded.
func (s *Store) Version(name string, serial int64) (Record, bool, error) {
	var (
		r  Record
		ok bool
	)
	if serial < 0 {
		return Record{}, false, nil
	}
	err := s.read(func(vw kv.View) error {
		var (
			at    int64 = -1
			value []byte
		)
		err := vw.Scan(versionsOf(name), "", false, func(k string, v []byte) error {
			n, sv, parsed := parseVersion(k)
			switch {
			case !parsed || n != name:
				return nil // not a key of name's
			case sv > serial:
				return errStop
			}
			at, value = sv, v
			return nil
		})
		if err != nil && err != errStop {
			return err
		}
		if at < 0 {
			return nil // never written
		}
		r, ok, err = DecodeVersion(name, at, value)
		return err
	})
	if err != nil {
		return Record{}, false, fmt.Errorf("get %q at serial %d: %w", name, serial, err)
	}
	return r, ok, nil
}

// History returns the history entries, oldest (lowest serial) first. It
// returns an error wrapping ErrCorrupt if an entry fails its check or cannot
// be decoded.
func (s *Store) History() ([]HistoryEntry, error) {
	var hs []HistoryEntry
	err := s.read(func(vw kv.View) error {
		return vw.Scan(prefixHistory, "", false, func(k string, v []byte) error {
			serial, seq, ok := parseHistory(k)
			if !ok {
				return corruptData(fmt.Errorf("history key %q: not a history key", k[len(prefixHistory):]))
			}
			h, err := DecodeHistory(serial, seq, v)
			hs = append(hs, h)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read state history: %w", err)
	}
	return hs, nil
}

// Intents returns the recorded intents, sorted by name. It returns an error
// wrapping ErrCorrupt if an intent fails its check or cannot be decoded.
func (s *Store) Intents() ([]Intent, error) {
	var ins []Intent
	err := s.read(func(vw kv.View) error {
		return vw.Scan(prefixIntents, "", false, func(k string, v []byte) error {
			in, err := DecodeIntent(k[len(prefixIntents):], v)
			ins = append(ins, in)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read state intents: %w", err)
	}
	return ins, nil
}
