package main

import (
	"errors"
	"fmt"

	"reconcile/engine"
	"reconcile/engine/specs"
	"reconcile/resources"
	"reconcile/state"
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
	engine.Store
	Close() error
	Version(name string, serial int64) (state.Record, bool, error)
	History() ([]state.HistoryEntry, error)
	Rename(oldName, newName string) error
}

// openState opens the state of the command's stack on its backend. A
// state that does not exist is created only with create; otherwise the
// error says which commands start one.
func (c *cli) openState(readOnly, create bool) (store, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	if ws.backend.etcd != nil {
		return nil, fmt.Errorf("state on etcd is not available in this build")
	}
	st, err := state.Open(ws.backend.statePath(ws.stack), state.Options{ReadOnly: readOnly, Create: create, LockTimeout: c.g.lockTimeout, Command: "reconcile " + c.cmd})
	if errors.Is(err, state.ErrNoState) {
		return nil, fmt.Errorf("%w; only plan and apply start a new state: check --state and --stack", err)
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}
