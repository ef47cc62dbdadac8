package main

import (
	"fmt"
	"time"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/state"
)

// stateTaint marks a managed resource tainted: the next plan replaces it,
// with the reason replace_because_tainted.
func stateTaint(c *cli, _ *cmdOpts, st store, args []string) int {
	rec, code := c.taintable(st, args[0], "taint")
	if code != exitOK {
		return code
	}
	name := untrusted.Name(rec.Name)
	if rec.Tainted != "" {
		fmt.Fprintf(c.stdout, "%s is already tainted (%s): the next apply replaces it. Nothing was changed.\n", name, untrusted.Text(rec.Tainted))
		return exitOK
	}
	rec.Tainted = plan.TaintRequested
	if _, err := st.Put(rec); err != nil {
		return c.errorf("%v", err)
	}
	if err := st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "state taint " + rec.Name}); err != nil {
		return c.errorf("%s was marked tainted, but its history entry was not recorded: %v", name, err)
	}
	fmt.Fprintf(c.stdout, "Marked %s (%s %s) tainted: the next plan replaces it. 'reconcile state untaint %s' takes it back.\n", name, untrusted.Text(rec.Type), untrusted.Text(rec.ID), name)
	if rec.Protect {
		fmt.Fprintf(c.stdout, "Note: %s is protected: plans refuse to replace it until protect: false is applied.\n", name)
	}
	return exitOK
}

// stateUntaint takes a taint back: the next plan compares the resource
// with the specs as usual.
func stateUntaint(c *cli, _ *cmdOpts, st store, args []string) int {
	rec, code := c.taintable(st, args[0], "untaint")
	if code != exitOK {
		return code
	}
	name := untrusted.Name(rec.Name)
	if rec.Tainted == "" {
		fmt.Fprintf(c.stdout, "%s is not tainted. Nothing was changed.\n", name)
		return exitOK
	}
	why := rec.Tainted
	rec.Tainted = ""
	if _, err := st.Put(rec); err != nil {
		return c.errorf("%v", err)
	}
	if err := st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "state untaint " + rec.Name}); err != nil {
		return c.errorf("%s is no longer tainted, but its history entry was not recorded: %v", name, err)
	}
	fmt.Fprintf(c.stdout, "%s is no longer tainted: the next plan compares it with the specs as usual.\n", name)
	if why != plan.TaintRequested {
		fmt.Fprintf(c.stdout, "It was tainted because its create failed (%s): check that the object is usable.\n", untrusted.Text(why))
	}
	return exitOK
}

// taintable returns the record name of st, which taint and untaint
// change: a managed resource with an object in the cloud. Otherwise it
// says why not, and returns exitError.
func (c *cli) taintable(st store, name, verb string) (state.Record, int) {
	rec, ok, err := st.Get(name)
	switch {
	case err != nil:
		return rec, c.errorf("%v", err)
	case !ok:
		return rec, c.errorf("no node named %q in state%s; run 'reconcile state list'", name, c.suggestRecord(st, name))
	case rec.Kind != kind.Resource:
		return rec, c.errorf("%q is a %s, which reconcile reads and never replaces: only managed resources can be %sed", name, rec.Kind, verb)
	case rec.ID == "":
		return rec, c.errorf("%q has no object in the cloud (its create never completed): there is nothing to %s; the next apply creates it", name, verb)
	}
	return rec, exitOK
}
