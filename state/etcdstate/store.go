package etcdstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reconcile-dev/reconcile/state"
)

// pageSize is the number of keys one range request of a listing reads.
const pageSize = 1000

var _ state.Backend = (*Store)(nil)

// Store is an open state on etcd. Its methods are safe for concurrent use.
// A writer holds the stack's lock until Close.
type Store struct {
	opts     Options // without the password
	location string
	k        keys
	cli      *clientv3.Client
	readOnly bool
	// rev, for a read-only Store, is the revision every read is made at.
	rev    int64
	closed atomic.Bool

	// The lock, for a writer.
	lease    clientv3.LeaseID
	lockRev  int64 // create revision of the lock key this Store put
	lost     chan struct{}
	lostOnce sync.Once
	// leaseEnd is the earliest the lease can expire unless renewed. It
	// holds a monotonic clock
	// reading, which goes on while the process is stopped, so a process
	// that wakes from a long stop sees it passed.
	leaseMu  sync.Mutex
	leaseEnd time.Time
	stopBg   context.CancelFunc // stops the keep-alive and the lock watch
	bg       sync.WaitGroup

	// txMu serializes transactions and guards the fields below it, which
	// mirror the stack as this Store's last transaction left it: under
	// the lock no one else writes.
	txMu       sync.Mutex
	serial     int64
	serialRev  int64  // mod revision of the serial key
	historySeq uint64 // highest history sequence number in use
	unsure     bool   // a write failed without knowing whether it was made
	// count is the record count, when countKnown: a writer's as its last
	// transaction left it, a reader's at its revision (see count.go).
	count      int64
	countKnown bool

	knownMu sync.Mutex
	kn      knowledge // a writer's, of which records exist (see count.go)

	mu         sync.Mutex // guards queue and committing
	queue      []*call    // callers of commit waiting for the next commit
	committing bool       // a caller of commit is committing

	// hooks lets tests watch commits; nil otherwise.
	hooks *commitHooks
}

// commitHooks are called, when set, as commit groups calls.
type commitHooks struct {
	queued func(n int)     // a caller joined the queue, now n long (called under mu)
	commit func(calls int) // a transaction of calls calls is about to run
}

// Open opens the stack opts.Stack under opts.Prefix on the etcd cluster at
// opts.Endpoints.
//
// A stack that does not exist is created only if opts.Create is set, also
// for a read-only Store; without it Open returns an error wrapping
// state.ErrNoState that names the location. Creating writes the meta
// values in one transaction that fails if another process created the
// stack first, whose stack Open then opens.
//
// A writer takes the stack's lock, a key attached to a lease of
// opts.LockTTL that the Store keeps alive in the background until Close.
// While another process holds it, Open waits, watching the lock key, up to
// opts.LockTimeout, and then returns a *state.LockedError naming the
// holder. A read-only Store takes no lock: it reads at the revision of
// its Open, one consistent snapshot, however the stack changes meanwhile.
//
// With opts.Copy, a stack Open creates is marked incomplete, in the
// transaction that creates it, until Load's last write, and Open accepts a
// stack so marked; without it, Open refuses one with a
// *state.IncompleteError.
//
// Open checks the meta values; a damaged one yields an error wrapping
// state.ErrCorrupt, a stack of a newer format one wrapping
// state.ErrNewerFormat. Other values are checked as they are read. ctx
// bounds Open only.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err == nil {
		err = checkStack(opts.Stack)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", opts, err)
	}
	cli, watch, err := connect(opts)
	if err != nil {
		return nil, advise(fmt.Errorf("open state %s: %w", opts, err))
	}
	s := &Store{
		location: opts.String(),
		k:        keys{base: opts.Prefix + "/" + opts.Stack + "/"},
		cli:      cli,
		readOnly: opts.ReadOnly,
		lost:     make(chan struct{}),
	}
	opts.Password = ""
	s.opts = opts
	if err := s.open(ctx); err != nil {
		cli.Close()
		return nil, advise(watch.explain(err, opts))
	}
	return s, nil
}

// advise adds what to do to an error of etcd's authentication or
// authorization, which etcd words for its operators.
func advise(err error) error {
	for _, e := range []error{rpctypes.ErrUserEmpty, rpctypes.ErrAuthFailed, rpctypes.ErrInvalidAuthToken, rpctypes.ErrAuthOldRevision} {
		if errors.Is(err, e) || rpctypes.Error(err) == e || strings.Contains(err.Error(), e.Error()) {
			return fmt.Errorf("%w; give etcd's user and password in ETCDCTL_USER and ETCDCTL_PASSWORD (or ETCDCTL_USER=name:password), as etcdctl takes them", err)
		}
	}
	if errors.Is(err, rpctypes.ErrPermissionDenied) || rpctypes.Error(err) == rpctypes.ErrPermissionDenied || strings.Contains(err.Error(), rpctypes.ErrPermissionDenied.Error()) {
		return fmt.Errorf("%w; the etcd user needs read and write permission on the key prefix (etcdctl role grant-permission ROLE --prefix readwrite PREFIX/)", err)
	}
	return err
}

// connect returns a client of the cluster opts names, and the watch of
// its connections.
func connect(opts Options) (*clientv3.Client, *connWatch, error) {
	tlsCfg, err := opts.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	if err := reach(context.Background(), opts); err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	w := &connWatch{}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          opts.Endpoints,
		DialTimeout:        opts.DialTimeout,
		TLS:                tlsCfg,
		Username:           opts.Username,
		Password:           opts.Password,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: opts.MaxRequestBytes + 64<<10,
		DialOptions:        w.dialOptions(opts.Endpoints, tlsCfg),
	})
	if err != nil {
		// With a user name, the client authenticates before it returns.
		return nil, nil, fmt.Errorf("connect: %w", w.explain(cleanErr(err, opts), opts))
	}
	return cli, w, nil
}

// cleanErr returns err, or a copy of its text with the password removed if
// it somehow holds it.
func cleanErr(err error, opts Options) error {
	if opts.Password != "" && err != nil && strings.Contains(err.Error(), opts.Password) {
		return errors.New("error text withheld: it held a credential")
	}
	return err
}

// open does the work of Open after connecting.
func (s *Store) open(ctx context.Context) error {
	if err := s.ensureStack(ctx); err != nil {
		return err
	}
	// The meta values, checked: also a writer's, before it waits for the
	// lock of a stack that is no state yet (a copy into it has not
	// finished; its copier may hold the lock).
	mr, err := s.readMetaFull(ctx, 0)
	if err != nil {
		return err
	}
	if s.readOnly {
		// One consistent snapshot: the revision of that read.
		s.rev, s.count, s.countKnown = mr.rev, mr.count, mr.countOK
		return nil
	}
	if err := s.takeLock(ctx); err != nil {
		return err
	}
	// The stack may have changed while Open waited for the lock.
	s.txMu.Lock()
	err = s.refresh(ctx)
	s.txMu.Unlock()
	if err != nil {
		s.Close()
		return err
	}
	return nil
}

// ensureStack checks that the stack exists, and creates it if it does not
// and Create is set.
//
// A stack is made in one transaction, all its meta values at once, so no
// reader ever sees it half made. What ensureStack reads to tell a missing
// stack from a damaged one, it reads in one transaction too, at one
// revision: read apart, the meta values could be missing from the first
// read and present in the second, made meanwhile by another process
// starting the same new stack, which would look like a stack whose meta
// values were lost.
func (s *Store) ensureStack(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.k.format(), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.base, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(2)),
	).Commit()
	if err != nil {
		return s.errorf("open state %s: %w", s.location, err)
	}
	if resp.Responses[0].GetResponseRange().Count > 0 {
		return nil
	}
	// No meta: nothing else may be there either, but the lock key (a
	// writer of the stack's first Open takes it once the stack is made,
	// and a lock outlives a stack removed under it).
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		if key := string(kv.Key); key != s.k.lock() {
			return fmt.Errorf("open state %s: %w: no meta values, but %q", s.location, state.ErrCorrupt, key)
		}
	}
	if !s.opts.Create {
		return &noStateError{location: s.location}
	}
	lineage, err := state.NewLineage()
	if err != nil {
		return err
	}
	key, err := state.NewSecretKey()
	if err != nil {
		return err
	}
	ops := []clientv3.Op{
		clientv3.OpPut(s.k.format(), string(state.EncodeFormat())),
		clientv3.OpPut(s.k.serial(), string(state.EncodeSerial(0))),
		clientv3.OpPut(s.k.count(), string(state.EncodeCount(0, 0))),
		clientv3.OpPut(s.k.lineage(), string(state.EncodeLineage(lineage))),
		clientv3.OpPut(s.k.secret(), string(state.EncodeSecretKey(key))),
	}
	if s.opts.Copy != nil {
		// Made for a copy: incomplete from the start, until Load's last
		// write.
		ops = append(ops, clientv3.OpPut(s.k.incomplete(), string(state.EncodeCopyMark(*s.opts.Copy))))
	}
	_, err = s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.k.format()), "=", 0)).
		Then(ops...).Commit()
	// Not Succeeded: another process created it first; open theirs.
	if err != nil {
		return s.errorf("create state %s: %w", s.location, err)
	}
	return nil
}

// noStateError is returned by Open for a stack that does not exist.
type noStateError struct{ location string }

func (e *noStateError) Error() string { return fmt.Sprintf("state %s does not exist", e.location) }
func (e *noStateError) Unwrap() error { return state.ErrNoState }

// errorf is fmt.Errorf for errors that may come from the client: it keeps
// any credential out of their text.
func (s *Store) errorf(format string, args ...any) error {
	return cleanErr(fmt.Errorf(format, args...), s.opts)
}

// readMeta reads and checks the meta values at rev (0: the latest) and
// returns them with the revision read at.
func (s *Store) readMeta(ctx context.Context, rev int64) (state.Meta, int64, error) {
	mr, err := s.readMetaFull(ctx, rev)
	return mr.Meta, mr.rev, err
}

// metaRead is what readMetaFull reads.
type metaRead struct {
	state.Meta
	key       []byte
	rev       int64 // the revision read at
	serialRev int64 // the serial key's mod revision
	// count is the record count, when countOK: it was counted at the
	// serial (see state.EncodeCount).
	count   int64
	countOK bool
}

// readMetaFull reads and checks the meta values at rev (0: the latest):
// lineage, serial, format, secret key and record count. A stack marked
// incomplete yields a *state.IncompleteError, unless the Store is opened
// for the copy.
func (s *Store) readMetaFull(ctx context.Context, rev int64) (mr metaRead, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := s.cli.Get(ctx, s.k.base+"meta/", opts...)
	if err != nil {
		return mr, s.readErr("read state meta", err)
	}
	values := map[string]*mvccpb.KeyValue{}
	for _, kv := range resp.Kvs {
		values[string(kv.Key)] = kv
	}
	get := func(key string) ([]byte, error) {
		kv := values[key]
		if kv == nil {
			return nil, fmt.Errorf("%w: meta %q: missing", state.ErrCorrupt, key[len(s.k.base)+len("meta/"):])
		}
		return kv.Value, nil
	}
	wrap := func(err error) error {
		if errors.Is(err, state.ErrNewerFormat) {
			return fmt.Errorf("open state %s: %w", s.location, err)
		}
		return fmt.Errorf("read state meta %s: %w", s.location, err)
	}
	v, err := get(s.k.format())
	if err == nil {
		mr.FormatVersion, err = state.DecodeFormat(v)
	}
	if err != nil {
		return mr, wrap(err)
	}
	if v, err = get(s.k.serial()); err == nil {
		mr.Serial, err = state.DecodeSerial(v)
	}
	if err != nil {
		return mr, wrap(err)
	}
	if v, err = get(s.k.lineage()); err == nil {
		mr.Lineage, err = state.DecodeLineage(v)
	}
	if err != nil {
		return mr, wrap(err)
	}
	if v, err = get(s.k.secret()); err == nil {
		mr.key, err = state.DecodeSecretKey(v)
	}
	if err != nil {
		return mr, wrap(err)
	}
	if kv := values[s.k.count()]; kv != nil {
		var at int64
		if mr.count, at, err = state.DecodeCount(kv.Value); err != nil {
			return mr, wrap(err)
		}
		mr.countOK = at == mr.Serial
	}
	if kv := values[s.k.incomplete()]; kv != nil && s.opts.Copy == nil {
		mark, err := state.DecodeCopyMark(kv.Value)
		if err != nil {
			return mr, wrap(err)
		}
		return mr, &state.IncompleteError{Location: s.location, Mark: mark}
	}
	mr.rev = rev
	if rev == 0 {
		mr.rev = resp.Header.Revision
	}
	mr.serialRev = values[s.k.serial()].ModRevision
	return mr, nil
}

// readErr wraps err, from a read, with what was read and the location,
// and explains a snapshot revision lost to compaction.
func (s *Store) readErr(what string, err error) error {
	if errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("%s %s: the snapshot at revision %d was compacted away while reading; run again: %w", what, s.location, s.rev, err)
	}
	return s.errorf("%s %s: %w", what, s.location, err)
}

// Close releases the lock, if the Store holds it, by revoking its lease,
// which deletes the lock key at once, and closes the connection. Closing a
// closed Store does nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	var err error
	if s.lease != 0 {
		s.stopBg()
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
		_, rerr := s.cli.Revoke(ctx, s.lease)
		cancel()
		if rerr != nil && !errors.Is(rerr, rpctypes.ErrLeaseNotFound) && !s.isLost() {
			// The lease expires by itself after LockTTL.
			err = s.errorf("close state %s: release lock: %w", s.location, rerr)
		}
		s.bg.Wait()
	}
	if cerr := s.cli.Close(); err == nil && cerr != nil && !errors.Is(cerr, context.Canceled) {
		err = s.errorf("close state %s: %w", s.location, cerr)
	}
	return err
}

// errClosed is returned by every method called after Close.
func (s *Store) errClosed() error {
	return fmt.Errorf("state %s is closed", s.location)
}

// Location describes the state for messages, without credentials:
// `etcd://host:port,.../prefix (stack S)`.
func (s *Store) Location() string { return s.location }

// ReadOnly reports whether the Store was opened with Options.ReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Lost returns a channel closed once the Store has lost its lock: its
// lease expired (the process was paused or cut off from etcd for longer
// than LockTTL) or was revoked, its lock key was deleted, or a write
// failed its lock check. From then on every write fails with an error
// wrapping state.ErrLockLost, as another runner may hold the lock: the
// caller should stop at once. For a read-only Store, which holds no lock,
// the channel never closes.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// Held returns nil while this writer's lock is surely still its own, and
// an error wrapping state.ErrLockLost once the lock is lost or its lease
// may have lapsed: the last renewal is older than the lease's TTL, which is
// what a process sees on waking from a stop (SIGSTOP, a frozen VM) that
// outlasted it. Callers check it right before a change in the cloud that
// no state write could fence, such as a create. A read-only Store returns
// nil.
func (s *Store) Held() error {
	if s.readOnly {
		return nil
	}
	if s.isLost() {
		return fmt.Errorf("state %s: %w", s.location, state.ErrLockLost)
	}
	s.leaseMu.Lock()
	end := s.leaseEnd
	s.leaseMu.Unlock()
	if !time.Now().Before(end) {
		s.markLost()
		return fmt.Errorf("state %s: %w (its lease of %s was last renewed too long ago)", s.location, state.ErrLockLost, s.opts.LockTTL)
	}
	return nil
}

// renewed records that the lease runs at least ttl seconds from at.
func (s *Store) renewed(at time.Time, ttl int64) {
	s.leaseMu.Lock()
	s.leaseEnd = at.Add(time.Duration(ttl) * time.Second)
	s.leaseMu.Unlock()
}

// isLost reports whether Lost is closed.
func (s *Store) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// markLost closes Lost.
func (s *Store) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// readCtx returns the context of one read.
func (s *Store) readCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.RequestTimeout)
}

// readOpts returns the options of a read: at the snapshot revision for a
// read-only Store.
func (s *Store) readOpts(opts ...clientv3.OpOption) []clientv3.OpOption {
	if s.rev > 0 {
		opts = append(opts, clientv3.WithRev(s.rev))
	}
	return opts
}

// get returns the value of key, or nil if there is none.
func (s *Store) get(key string) ([]byte, error) {
	v, _, err := s.getAt(key)
	return v, err
}

// getAt is get, also returning the revision read at.
func (s *Store) getAt(key string) ([]byte, int64, error) {
	if s.closed.Load() {
		return nil, 0, s.errClosed()
	}
	ctx, cancel := s.readCtx()
	defer cancel()
	resp, err := s.cli.Get(ctx, key, s.readOpts()...)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	return resp.Kvs[0].Value, resp.Header.Revision, nil
}

// scan calls fn with every key and value under prefix, in key order, a
// page at a time, all at one revision: the Store's snapshot for a reader,
// the latest for a writer.
func (s *Store) scan(prefix string, keysOnly bool, fn func(key string, value []byte) error) error {
	if s.closed.Load() {
		return s.errClosed()
	}
	rev := s.rev
	if rev == 0 {
		// Fix the revision with a first, empty read.
		ctx, cancel := s.readCtx()
		resp, err := s.cli.Get(ctx, prefix, clientv3.WithCountOnly())
		cancel()
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
	}
	return s.scanAt(context.Background(), prefix, rev, keysOnly, fn)
}

// Meta returns the state's lineage, serial and format version. It returns
// an error wrapping state.ErrCorrupt if one of them fails its check.
func (s *Store) Meta() (state.Meta, error) {
	if s.closed.Load() {
		return state.Meta{}, s.errClosed()
	}
	m, _, err := s.readMeta(context.Background(), s.rev)
	return m, err
}

// SecretKey returns a copy of the state's secret key, as
// state.Store.SecretKey does. No error shows it.
func (s *Store) SecretKey() ([]byte, error) {
	v, err := s.get(s.k.secret())
	if err != nil {
		return nil, s.readErr("read state key", err)
	}
	if v == nil {
		return nil, fmt.Errorf("read state key %s: %w: meta \"key\": missing", s.location, state.ErrCorrupt)
	}
	key, err := state.DecodeSecretKey(v)
	if err != nil {
		return nil, fmt.Errorf("read state key %s: %w", s.location, err)
	}
	return key, nil
}

// Get returns the record named name and true, or false if there is none.
// It returns an error wrapping state.ErrCorrupt if the record fails its
// check or cannot be decoded.
func (s *Store) Get(name string) (state.Record, bool, error) {
	v, rev, err := s.getAt(s.k.record(name))
	if err != nil {
		return state.Record{}, false, fmt.Errorf("get %q: %w", name, s.readErr("read", err))
	}
	s.noteRead(rev, name, v != nil)
	if v == nil {
		return state.Record{}, false, nil
	}
	r, err := state.DecodeRecord(name, v)
	if err != nil {
		return state.Record{}, false, fmt.Errorf("get %q: %w", name, err)
	}
	return r, true, nil
}

// List returns every record, sorted by name (byte-wise), read at one
// revision. It returns an error wrapping state.ErrCorrupt if a record
// fails its check or cannot be decoded.
func (s *Store) List() ([]state.Record, error) {
	return scanRecords(s, state.DecodeRecord)
}

// ListLazy returns every record as List does, each as a
// state.LazyRecord, as state.Store.ListLazy does.
func (s *Store) ListLazy() ([]state.LazyRecord, error) {
	return scanRecords(s, state.DecodeLazyRecord)
}

// scanRecords decodes every record with decode, in order of name, all at
// one revision, and checks that they are as many as the record count
// there says.
func scanRecords[T any](s *Store, decode func(name string, value []byte) (T, error)) ([]T, error) {
	if s.closed.Load() {
		return nil, s.errClosed()
	}
	ctx := context.Background()
	mr := metaRead{rev: s.rev, count: s.count, countOK: s.countKnown}
	if mr.rev == 0 {
		// A writer reads at the latest revision, with the count there.
		var err error
		if mr, err = s.readMetaFull(ctx, 0); err != nil {
			return nil, fmt.Errorf("list state: %w", err)
		}
	}
	var (
		rs    []T
		names map[string]bool
	)
	if !s.readOnly {
		names = map[string]bool{}
	}
	prefix := s.k.records()
	err := s.scanAt(ctx, prefix, mr.rev, false, func(key string, value []byte) error {
		name := key[len(prefix):]
		r, err := decode(name, value)
		if err != nil {
			return err
		}
		rs = append(rs, r)
		if names != nil {
			names[name] = true
		}
		return nil
	})
	if err == nil {
		err = s.checkCount(ctx, mr, int64(len(rs)))
	}
	if err != nil {
		return nil, fmt.Errorf("list state: %w", s.wrapRead(err))
	}
	s.noteList(mr.rev, names)
	return rs, nil
}

// wrapRead wraps err from scan or get for a read error's cause: decoding
// errors as they are, client errors with the location.
func (s *Store) wrapRead(err error) error {
	if errors.Is(err, state.ErrCorrupt) || s.closed.Load() {
		return err
	}
	return s.readErr("read", err)
}

// Version returns the record named name as it stood at serial, as
// state.Store.Version does.
func (s *Store) Version(name string, serial int64) (state.Record, bool, error) {
	if serial < 0 {
		return state.Record{}, false, nil
	}
	if s.closed.Load() {
		return state.Record{}, false, s.errClosed()
	}
	ctx, cancel := s.readCtx()
	defer cancel()
	// The latest version at or before serial: the last key of the range.
	resp, err := s.cli.Get(ctx, s.k.versionsOf(name), s.readOpts(
		clientv3.WithRange(s.k.version(name, serial)+"\x00"),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend),
		clientv3.WithLimit(1),
	)...)
	if err != nil {
		return state.Record{}, false, fmt.Errorf("get %q at serial %d: %w", name, serial, s.readErr("read", err))
	}
	if len(resp.Kvs) == 0 {
		return state.Record{}, false, nil
	}
	kv := resp.Kvs[0]
	n, at, ok := s.k.parseVersion(string(kv.Key))
	if !ok || n != name {
		return state.Record{}, false, fmt.Errorf("get %q at serial %d: %w: bad versions key %q", name, serial, state.ErrCorrupt, kv.Key)
	}
	r, found, err := state.DecodeVersion(name, at, kv.Value)
	if err != nil {
		return state.Record{}, false, fmt.Errorf("get %q at serial %d: %w", name, serial, err)
	}
	return r, found, nil
}

// History returns the history entries, oldest (lowest serial) first. It
// returns an error wrapping state.ErrCorrupt if an entry fails its check
// or cannot be decoded.
func (s *Store) History() ([]state.HistoryEntry, error) {
	var hs []state.HistoryEntry
	err := s.scan(s.k.history(), false, func(key string, value []byte) error {
		serial, seq, ok := s.k.parseHistory(key)
		if !ok {
			return fmt.Errorf("%w: bad history key %q", state.ErrCorrupt, key)
		}
		h, err := state.DecodeHistory(serial, seq, value)
		if err != nil {
			return err
		}
		hs = append(hs, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read state history: %w", s.wrapRead(err))
	}
	return hs, nil
}

// Intents returns the recorded intents, sorted by name. It returns an
// error wrapping state.ErrCorrupt if an intent fails its check or cannot
// be decoded.
func (s *Store) Intents() ([]state.Intent, error) {
	var ins []state.Intent
	prefix := s.k.intents()
	err := s.scan(prefix, false, func(key string, value []byte) error {
		in, err := state.DecodeIntent(key[len(prefix):], value)
		if err != nil {
			return err
		}
		ins = append(ins, in)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read state intents: %w", s.wrapRead(err))
	}
	return ins, nil
}

// Outputs returns the outputs last recorded, and whether any were. It
// returns an error wrapping state.ErrCorrupt if they fail their check or
// cannot be decoded.
func (s *Store) Outputs() (state.Outputs, bool, error) {
	v, err := s.get(s.k.outputs())
	if err != nil {
		return state.Outputs{}, false, s.wrapRead(err)
	}
	if v == nil {
		return state.Outputs{}, false, nil
	}
	o, err := state.DecodeOutputs(v)
	if err != nil {
		return state.Outputs{}, false, fmt.Errorf("read state outputs %s: %w", s.location, err)
	}
	return o, true, nil
}
