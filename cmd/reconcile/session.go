package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
)

// session is what plan, apply, destroy and drift work on: the loaded specs,
// the drivers and the open state.
type session struct {
	spec *specs.Spec
	reg  resources.Registry
	st   store
	stop func()
}

// close releases the state and the drivers.
func (s *session) close() { s.stop() }

// open loads the specs (printing their diagnostics), builds the drivers and
// opens the state: read-only for plans and drift, which never block each
// other, and locked for changes. It prints what went wrong and returns nil.
//
// A read-only command opens its state while the specs load (see
// readAhead): the state does not depend on them, and the open checks the
// whole state file.
func (c *cli) open(readOnly bool) *session {
	var ahead *readAhead
	if readOnly {
		ahead = c.readAhead()
	}
	spec, ok := c.loadSpec()
	if !ok {
		ahead.abandon()
		return nil
	}
	reg, cleanup, err := c.registry()
	if err != nil {
		ahead.abandon()
		c.errorf("%v", err)
		return nil
	}
	// Only plan and apply may start a new state (and import, which opens
	// its own): drift or destroy on a path that holds none (a typo in a
	// cron job) must fail, not report a clean empty state forever.
	create := c.cmd == "plan" || c.cmd == "apply"
	st, err := ahead.take()
	if st == nil && err == nil {
		st, err = c.openState(readOnly, create)
	}
	if err != nil {
		cleanup()
		c.errorf("%v", err)
		return nil
	}
	return &session{spec: spec, reg: reg, st: st, stop: func() { st.Close(); cleanup() }}
}

// readAhead opens a read-only command's existing state while the specs
// load. What it finds is used only once they have loaded: until then, a
// wait for the lock is not reported, and a state that does not exist is
// left for open to create (a plan whose specs have errors starts none).
type readAhead struct {
	done chan struct{}
	st   store
	err  error // of the open; nil with st nil: open the state as usual

	mu      sync.Mutex
	loaded  bool     // the specs loaded: say the notices at once
	notices []string // of waits for the lock, said once the specs load
	say     func(string)
}

// readAhead starts opening the state; nil when the workspace does not
// resolve (loading the specs reports why).
func (c *cli) readAhead() *readAhead {
	// Resolved here, before the goroutine: from then on both only read it.
	if _, err := c.workspace(); err != nil {
		return nil
	}
	r := &readAhead{done: make(chan struct{}), say: c.say}
	go func() {
		defer close(r.done)
		st, err := c.openStateSaying(true, false, r.notice)
		if p, ok := st.(interface{ Prefetch() }); ok && err == nil {
			// Its records too (plan and drift read them all), so that
			// the file is out of memory before the specs are in.
			p.Prefetch()
		}
		if !errors.Is(err, state.ErrNoState) {
			r.st, r.err = st, err
		}
	}()
	return r
}

// notice says msg now if the specs have loaded, or once they do.
func (r *readAhead) notice(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded {
		r.say(msg)
		return
	}
	r.notices = append(r.notices, msg)
}

// take waits for the state opened ahead and returns it; (nil, nil) when
// there is none: open it as usual.
func (r *readAhead) take() (store, error) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	r.loaded = true
	for _, msg := range r.notices {
		r.say(msg)
	}
	r.notices = nil
	r.mu.Unlock()
	<-r.done
	return r.st, r.err
}

// abandon closes the state opened ahead once it is open, without waiting
// for it: the specs did not load.
func (r *readAhead) abandon() {
	if r == nil {
		return
	}
	go func() {
		<-r.done
		if r.st != nil {
			r.st.Close()
		}
	}()
}

// store is what the commands use of a state: what the engine uses, and
// what the state subcommands inspect and edit.
type store interface {
	state.Backend
	// ListLazy lists the records as state.ListLazy takes them: the
	// writer's store wraps this interface, and plan and apply read the
	// records lazily through it.
	ListLazy() ([]state.LazyRecord, error)
	Close() error
	Version(name string, serial int64) (state.Record, bool, error)
	History() ([]state.HistoryEntry, error)
	Rename(oldName, newName string) error
	Dump() (state.Snapshot, error)
	Load(snap state.Snapshot) error
}

// openState opens the state of the command's stack on its backend. A
// state that does not exist is created only with create, and only for a
// stack that is declared (see workspace.declared): a mistyped --stack
// must not start an empty state. Otherwise the error says which stacks
// exist and how to start one. A writer's store stops the command
// gracefully if its lock is lost.
func (c *cli) openState(readOnly, create bool) (store, error) {
	st, err := c.openStateSaying(readOnly, create, c.say)
	if errors.Is(err, state.ErrNoState) {
		return nil, c.noStack(c.ws, err)
	}
	return st, err
}

// openStateSaying is openState, saying a wait for the lock with say; a
// state that does not exist is an error of state.ErrNoState, unexplained.
func (c *cli) openStateSaying(readOnly, create bool, say func(string)) (store, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	so := state.Options{ReadOnly: readOnly, Create: create && ws.declared(), LockTimeout: c.g.lockTimeout, Command: "reconcile " + c.cmd}
	// A plan writes nothing to etcd, where a pull request's job may only
	// read: a stack it would start is planned from an empty state (see
	// absentStack), and started by the first apply or by 'stack init'.
	// On a local file, a plan still starts the state: the file is the
	// user's own, and a plan file needs the key it holds.
	planEmpty := readOnly && so.Create && ws.backend.etcd != nil
	if planEmpty {
		so.Create = false
	}
	st, err := c.openBackend(ws.backend, ws.stack, so, say)
	if planEmpty && errors.Is(err, state.ErrNoState) {
		// The records planned must fit the store the first apply makes.
		opts, err := ws.backend.etcdOptions(ws.stack, so, c.g.lockTTL)
		if err != nil {
			return nil, err
		}
		a, err := newAbsentStack(ws.stack, ws.backend.describe(ws.stack), opts.RecordLimit())
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	if readOnly {
		return st, nil
	}
	w := &watchedStore{store: st, closed: make(chan struct{})}
	go w.watch(c, ws.backend.describe(ws.stack))
	return w, nil
}

// say writes msg, a notice for people, to stderr.
func (c *cli) say(msg string) { fmt.Fprint(c.stderr, msg) }

// openBackend opens stack's state on backend b, saying so with say when it
// waits for another process's lock.
func (c *cli) openBackend(b backend, stack string, so state.Options, say func(string)) (store, error) {
	so.OnWait = func(h state.Holder) {
		say(fmt.Sprintf("Waiting up to %s (--lock-timeout) for the lock of %s, held by %s...\n", so.LockTimeout, b.describe(stack), untrusted.Text(h.String())))
	}
	if b.etcd == nil {
		return state.Open(b.statePath(stack), so)
	}
	opts, err := b.etcdOptions(stack, so, c.g.lockTTL)
	if err != nil {
		return nil, err
	}
	st, err := etcdstate.Open(c.ctx, opts)
	if err != nil {
		return nil, etcdTLSHint(err)
	}
	return st, nil
}

// watchedStore is a writer's store whose lock is watched: once it is lost
// (on etcd, the lease expired while this process was stalled or cut off,
// and another runner may hold the lock now) the command starts nothing
// new, as on a stop signal. Writes are refused by the store itself.
type watchedStore struct {
	store
	closed chan struct{}
	once   sync.Once
}

func (w *watchedStore) watch(c *cli, where string) {
	select {
	case <-w.Lost():
		fmt.Fprintf(c.stderr, "\nError: the lock of %s was lost: this run stalled or was cut off longer than --lock-ttl (%s), and another run may hold it now. "+
			"Stopping: nothing more is written to state. Run the command again once the other run has ended.\n", where, c.g.lockTTL)
		if sc := apply.StopControlOf(c.ctx); sc != nil {
			sc.Stop("lost the state lock")
		}
	case <-w.closed:
	}
}

func (w *watchedStore) Close() error {
	w.once.Do(func() { close(w.closed) })
	return w.store.Close()
}

// absentStack is what a plan reads of a stack on etcd that does not exist
// yet: an empty state (no lineage, serial 0, no records), read-only, with
// no key to sign a plan file with. Nothing of it is written anywhere.
type absentStack struct {
	stack, where string            // the stack's name, and backend.describe of it
	limit        state.RecordLimit // of the store that will hold the stack
	// viewKey seals what the plan compares: nothing, as no record holds a
	// digest. It is random and dies with the process, so that a digest
	// made with it tells nothing of a secret; it must never sign a plan
	// file (see saveError), as no state holds it to check one.
	viewKey []byte
}

var _ store = (*absentStack)(nil)

func newAbsentStack(stack, where string, limit state.RecordLimit) (*absentStack, error) {
	key, err := state.NewSecretKey()
	if err != nil {
		return nil, err
	}
	return &absentStack{stack: stack, where: where, limit: limit, viewKey: key}, nil
}

// notice says, for people, what the plan of the stack is made from.
func (a *absentStack) notice() string {
	return fmt.Sprintf("Note: stack %s does not exist yet: there is no state at %s. This plan starts from an empty state and writes nothing; "+
		"the first apply creates the stack.\n\n", a.stack, a.where)
}

// saveError is the error of saving a plan of the stack to a file: the
// file is signed with the key of the stack's state, which is not made yet.
func (a *absentStack) saveError() error {
	return fmt.Errorf("save plan: stack %q does not exist yet: there is no state at %s to hold the key a plan file is signed with. "+
		"Create the stack once with 'reconcile stack init %s', using etcd credentials that can write (the apply user's), then plan again",
		a.stack, a.where, a.stack)
}

// The reads: the state is empty.

func (a *absentStack) Meta() (state.Meta, error) {
	return state.Meta{FormatVersion: state.FormatVersion}, nil
}
func (a *absentStack) SecretKey() ([]byte, error)             { return a.viewKey, nil }
func (a *absentStack) List() ([]state.Record, error)          { return nil, nil }
func (a *absentStack) ListLazy() ([]state.LazyRecord, error)  { return nil, nil }
func (a *absentStack) Get(string) (state.Record, bool, error) { return state.Record{}, false, nil }
func (a *absentStack) Version(string, int64) (state.Record, bool, error) {
	return state.Record{}, false, nil
}
func (a *absentStack) Intents() ([]state.Intent, error)       { return nil, nil }
func (a *absentStack) Outputs() (state.Outputs, bool, error)  { return state.Outputs{}, false, nil }
func (a *absentStack) History() ([]state.HistoryEntry, error) { return nil, nil }
func (a *absentStack) Dump() (state.Snapshot, error) {
	return state.Snapshot{Meta: state.Meta{FormatVersion: state.FormatVersion}}, nil
}
func (a *absentStack) ReadOnly() bool                 { return true }
func (a *absentStack) Lost() <-chan struct{}          { return nil } // no lock to lose
func (a *absentStack) Held() error                    { return nil }
func (a *absentStack) RecordLimit() state.RecordLimit { return a.limit }
func (a *absentStack) Close() error                   { return nil }

// The writes: all refused, as by any read-only store.

func (a *absentStack) errReadOnly() error {
	return fmt.Errorf("stack %q does not exist yet (%s): %w", a.stack, a.where, state.ErrReadOnly)
}
func (a *absentStack) Put(state.Record) (state.Record, error) { return state.Record{}, a.errReadOnly() }
func (a *absentStack) PutAndClearIntent(state.Record) (state.Record, error) {
	return state.Record{}, a.errReadOnly()
}
func (a *absentStack) Delete(string) error                 { return a.errReadOnly() }
func (a *absentStack) PutIntent(state.Intent) error        { return a.errReadOnly() }
func (a *absentStack) ClearIntent(string) error            { return a.errReadOnly() }
func (a *absentStack) AddHistory(state.HistoryEntry) error { return a.errReadOnly() }
func (a *absentStack) PutOutputs(state.Outputs) error      { return a.errReadOnly() }
func (a *absentStack) Rename(string, string) error         { return a.errReadOnly() }
func (a *absentStack) Load(state.Snapshot) error           { return a.errReadOnly() }
func (a *absentStack) RewriteVersions(string, func(state.Record) (state.Record, bool)) error {
	return a.errReadOnly()
}
