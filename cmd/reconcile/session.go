package main

import (
	"errors"
	"fmt"

	"reconcile/engine"
	"reconcile/resources"
	"reconcile/state"
)

// session is what plan, apply, destroy and drift work on: the loaded specs,
// the drivers and the open state.
type session struct {
	spec *engine.Spec
	reg  resources.Registry
	st   *state.Store
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

// openState opens the state of --state for the command. A state that does
// not exist is created only with create; otherwise the error says which
// commands start one.
func (c *cli) openState(readOnly, create bool) (*state.Store, error) {
	st, err := state.Open(c.g.statePath, state.Options{ReadOnly: readOnly, Create: create, LockTimeout: c.g.lockTimeout, Command: "reconcile " + c.cmd})
	if errors.Is(err, state.ErrNoState) {
		return nil, fmt.Errorf("%w; only plan and apply start a new state: check --state", err)
	}
	return st, err
}
