package main

import (
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
	st, err := state.Open(c.g.statePath, state.Options{ReadOnly: readOnly, LockTimeout: c.g.lockTimeout, Command: "reconcile " + c.cmd})
	if err != nil {
		cleanup()
		c.errorf("%v", err)
		return nil
	}
	return &session{spec: spec, reg: reg, st: st, stop: func() { st.Close(); cleanup() }}
}
