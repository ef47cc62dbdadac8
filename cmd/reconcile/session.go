package main

import (
	"errors"
	"fmt"
	"sync"

	"reconcile/engine/apply"
	"reconcile/engine/specs"
	"reconcile/resources"
	"reconcile/state"
	"reconcile/state/etcdstate"
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
func (c *cli) open(readOnly bool) *session {
	spec, ok := c.loadSpec()
	if !ok {
		return nil
	}
	reg, cleanup, err := c.registry()
	if err != nil {
		c.errorf("%v", err)
		return nil
	}
	// Only plan and apply may start a new state: drift or destroy on a
	// path that holds none (a typo in a cron job) must fail, not report a
	// clean empty state forever.
	create := c.cmd == "plan" || c.cmd == "apply"
	st, err := c.openState(readOnly, create)
	if err != nil {
		cleanup()
		c.errorf("%v", err)
		return nil
	}
	return &session{spec: spec, reg: reg, st: st, stop: func() { st.Close(); cleanup() }}
}

// store is what the commands use of a state: what the engine uses, and
// what the state subcommands inspect and edit.
type store interface {
	state.Backend
	Close() error
	Version(name string, serial int64) (state.Record, bool, error)
	History() ([]state.HistoryEntry, error)
	Rename(oldName, newName string) error
	Dump() (state.Snapshot, error)
	Load(snap state.Snapshot) error
}

// openState opens the state of the command's stack on its backend. A
// state that does not exist is created only with create; otherwise the
// error says which commands start one. A writer's store stops the command
// gracefully if its lock is lost.
func (c *cli) openState(readOnly, create bool) (store, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	so := state.Options{ReadOnly: readOnly, Create: create, LockTimeout: c.g.lockTimeout, Command: "reconcile " + c.cmd}
	st, err := c.openBackend(ws.backend, ws.stack, so)
	if errors.Is(err, state.ErrNoState) {
		return nil, fmt.Errorf("%w; only plan and apply start a new state: check --state and --stack", err)
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

// openBackend opens stack's state on backend b, saying so when it waits
// for another process's lock.
func (c *cli) openBackend(b backend, stack string, so state.Options) (store, error) {
	so.OnWait = func(h state.Holder) {
		fmt.Fprintf(c.stderr, "Waiting up to %s (--lock-timeout) for the lock of %s, held by %s...\n", so.LockTimeout, b.describe(stack), h)
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
