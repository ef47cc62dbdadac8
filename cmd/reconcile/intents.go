package main

import (
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// resolveIntents resolves, before anything else, the creates that an
// earlier run started but did not see to their end (see
// apply.ResolveIntents), and prints what it did. It reports false after
// printing an error when state could not be written.
func (c *cli) resolveIntents(st store, reg resources.Registry) bool {
	ins, err := apply.PendingIntents(st)
	if err != nil {
		c.errorf("%v", err)
		return false
	}
	if len(ins) == 0 {
		return true
	}
	w := c.people() // stderr when stdout is for a document or an event stream
	render.IntentsHeading(w, intentNames(ins))
	rep, err := apply.ResolveIntents(c.ctx, st, reg, apply.ResolveOptions{
		Parallelism: c.g.parallelism,
		Observer:    func(e report.Event) { render.IntentProgress(w, e) },
	})
	render.IntentsText(w, c.stderr, rep)
	if err != nil {
		c.errorf("%v", err)
		return false
	}
	fmt.Fprintln(w)
	return true
}

// warnIntents tells a command that only reads state (plan, drift) about
// creates an earlier run left unresolved, which it cannot resolve.
func (c *cli) warnIntents(st store) {
	ins, err := apply.PendingIntents(st)
	if err != nil || len(ins) == 0 {
		return
	}
	render.IntentsWarning(c.stderr, intentNames(ins), c.cmd)
}

func intentNames(ins []state.Intent) []string {
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	return names
}

// forgetIntent clears the interrupted create of name, for 'state rm'. It
// reports whether there was one.
func forgetIntent(st store, name string) (bool, error) {
	ins, err := st.Intents()
	if err != nil {
		return false, err
	}
	for _, in := range ins {
		if in.Name == name {
			return true, st.ClearIntent(name)
		}
	}
	return false, nil
}
