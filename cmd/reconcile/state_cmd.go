package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/state"
)

var stateCmd = &command{
	name: "state", args: "list | show NAME [--serial N] | rm NAME | mv OLD NEW | taint NAME | untaint NAME | history | migrate --to URL [--all-stacks]",
	summary: "Inspect, edit and move the state.",
	detail: `list      every node in state with its type, kind and id
show NAME one node's inputs, outputs and dependencies (--serial N: as it stood at serial N)
rm NAME   forget a node without deleting it from the cloud (and an interrupted
          create of it that the next apply could not resolve)
mv OLD NEW rename a node, e.g. after renaming it in the specs, so it is not replaced
taint NAME mark a managed resource tainted: the next plan replaces it (the reason
          says it was marked tainted); the object stays until that apply
untaint NAME take a taint back (one from 'state taint', or from a create that failed)
history   every apply's serial, time, command and counts
migrate   copy the stack's state, whole (lineage, serial, history, versions,
          interrupted creates), to the same stack on another backend:
          --to etcd://HOST:PORT/PREFIX, or a file path. --all-stacks copies
          every stack. The target stack must not exist yet, or be an identical
          copy (a migrate can be run again); the source is left as it was.
          Until its last write the copy is marked incomplete: every other
          command refuses it, naming the migrate to run again to complete it.

rm, mv, taint, untaint and migrate take the state lock like apply does, and every
change but migrate is recorded in the history. With --output json, list, show,
history and migrate write the documents of docs/state-json.md.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.Int64Var(&o.serial, "serial", 0, "with show: the serial to show the node at")
		fs.StringVar(&o.to, "to", "", "with migrate: the backend to copy the state to (a path, file://PATH or etcd://HOST:PORT/PREFIX)")
		fs.BoolVar(&o.allStacks, "all-stacks", false, "with migrate: copy every stack of the backend, not only the current one")
	},
	run: runState,
}

// stateSub is one subcommand of state: how many arguments it takes,
// whether it writes (and so takes the lock), and what it does with the
// open state.
type stateSub struct {
	args   int
	writes bool
	run    func(c *cli, o *cmdOpts, st store, args []string) int
}

var stateSubs = map[string]stateSub{
	"list":    {0, false, stateList},
	"show":    {1, false, stateShow},
	"rm":      {1, true, stateRm},
	"mv":      {2, true, stateMv},
	"taint":   {1, true, stateTaint},
	"untaint": {1, true, stateUntaint},
	"history": {0, false, stateHistory},
	"migrate": {0, true, stateMigrate},
}

func runState(c *cli, o *cmdOpts, args []string) int {
	if len(args) == 0 {
		return c.errorf("state needs a subcommand: list, show NAME, rm NAME, mv OLD NEW, taint NAME, untaint NAME, history or migrate --to URL")
	}
	name, rest := args[0], args[1:]
	sub, ok := stateSubs[name]
	if !ok {
		return c.errorf("unknown state subcommand %q%s; use list, show, rm, mv, taint, untaint, history or migrate", name, didYouMean(name, sortedNames(stateSubs)))
	}
	if len(rest) != sub.args {
		return c.errorf("state %s takes %s, got %d", name, render.Count(sub.args, "argument", "arguments"), len(rest))
	}
	c.cmd = "state " + name
	if name == "migrate" {
		return stateMigrate(c, o, nil, nil)
	}
	st, err := c.openState(!sub.writes, false)
	if err != nil {
		return c.errorf("%v", err)
	}
	defer st.Close()
	return sub.run(c, o, st, rest)
}

func stateList(c *cli, _ *cmdOpts, st store, _ []string) int {
	recs, err := st.List()
	if err != nil {
		return c.errorf("%v", err)
	}
	if c.g.output == "json" {
		meta, err := st.Meta()
		if err != nil {
			return c.errorf("%v", err)
		}
		nodes := make([]render.StateNode, len(recs))
		for i, r := range recs {
			nodes[i] = nodeModel(r)
		}
		return c.rendered(render.StateListJSON(c.stdout, stateModel(meta), nodes))
	}
	if len(recs) == 0 {
		fmt.Fprintf(c.stdout, "The state at %s is empty.\n", c.ws.backend.describe(c.ws.stack))
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tKIND\tID")
	for _, r := range recs {
		id := untrusted.Text(r.ID)
		if r.Tainted != "" {
			id += " (tainted)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", untrusted.Name(r.Name), untrusted.Text(r.Type), r.Kind, id)
	}
	tw.Flush()
	return exitOK
}

func stateShow(c *cli, o *cmdOpts, st store, args []string) int {
	name := args[0]
	var rec state.Record
	var found bool
	var err error
	atSerial := c.set["serial"]
	if atSerial {
		meta, merr := st.Meta()
		if merr != nil {
			return c.errorf("%v", merr)
		}
		if o.serial < 0 || o.serial > meta.Serial {
			return c.errorf("the state at %s has serials 0 to %d, not %d; 'reconcile state history' lists them", c.ws.backend.describe(c.ws.stack), meta.Serial, o.serial)
		}
		rec, found, err = st.Version(name, o.serial)
	} else {
		rec, found, err = st.Get(name)
	}
	switch {
	case err != nil:
		return c.errorf("%v", err)
	case !found && atSerial:
		return c.errorf("%q was not in state at serial %d; 'reconcile state history' lists the serials", name, o.serial)
	case !found:
		return c.errorf("no node named %q in state%s; run 'reconcile state list'", name, c.suggestRecord(st, name))
	}
	if c.g.output == "json" {
		return c.rendered(render.RecordJSON(c.stdout, nodeModel(rec)))
	}
	w := c.stdout
	fmt.Fprintf(w, "# %s (%s, %s)\nid = %s\n", untrusted.Name(rec.Name), untrusted.Text(rec.Type), rec.Kind, untrusted.Quote(rec.ID))
	if rec.Protect {
		fmt.Fprintln(w, "protect = true")
	}
	if rec.Tainted != "" {
		fmt.Fprintf(w, "tainted = %s\n", untrusted.Quote(rec.Tainted))
	}
	if len(rec.Deposed) > 0 {
		fmt.Fprintf(w, "deposed = %q (replaced objects not yet deleted)\n", rec.Deposed)
	}
	printAttrs(c, "inputs", rec.Inputs)
	printAttrs(c, "outputs", rec.Outputs)
	if len(rec.Dependencies) > 0 {
		deps := make([]string, len(rec.Dependencies))
		for i, d := range rec.Dependencies {
			deps[i] = untrusted.Name(d)
		}
		fmt.Fprintf(w, "dependencies = %s\n", strings.Join(deps, ", "))
	}
	fmt.Fprintf(w, "serial = %d, updated %s\n", rec.Serial, rec.UpdatedAt.Format(time.RFC3339))
	return exitOK
}

func stateRm(c *cli, _ *cmdOpts, st store, args []string) int {
	name := args[0]
	// An interrupted create of the node is forgotten with it.
	hadIntent, err := forgetIntent(st, name)
	if err != nil {
		return c.errorf("%v", err)
	}
	if err := st.Delete(name); err != nil {
		if errors.Is(err, state.ErrNoRecord) && hadIntent {
			fmt.Fprintf(c.stdout, "Forgot the interrupted create of %s. Whatever it made, if anything, was not deleted.\n", untrusted.Name(name))
			return exitOK
		}
		if errors.Is(err, state.ErrNoRecord) {
			return c.errorf("no node named %q in state%s; nothing was removed", name, c.suggestRecord(st, name))
		}
		return c.errorf("%v", err)
	}
	_ = st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "state rm " + name, Counts: state.Counts{Forget: 1}})
	fmt.Fprintf(c.stdout, "Removed %s from state. The object itself was not deleted.\n", untrusted.Name(name))
	return exitOK
}

func stateMv(c *cli, _ *cmdOpts, st store, args []string) int {
	from, to := args[0], args[1]
	if err := st.Rename(from, to); err != nil {
		switch {
		case errors.Is(err, state.ErrNoRecord):
			return c.errorf("no node named %q in state%s", from, c.suggestRecord(st, from))
		case errors.Is(err, state.ErrExists):
			return c.errorf("%q is already in state; remove it first or choose another name", to)
		}
		return c.errorf("%v", err)
	}
	_ = st.AddHistory(state.HistoryEntry{Time: time.Now().UTC(), Command: "state mv " + from + " " + to, Counts: state.Counts{Move: 1}})
	fmt.Fprintf(c.stdout, "Moved %s to %s.\n", untrusted.Name(from), untrusted.Name(to))
	return exitOK
}

func stateHistory(c *cli, _ *cmdOpts, st store, _ []string) int {
	hs, err := st.History()
	if err != nil {
		return c.errorf("%v", err)
	}
	if c.g.output == "json" {
		meta, err := st.Meta()
		if err != nil {
			return c.errorf("%v", err)
		}
		entries := make([]render.HistoryEntry, len(hs))
		for i, h := range hs {
			entries[i] = render.HistoryEntry{Serial: h.Serial, Time: h.Time, Command: h.Command, Counts: maps.Collect(h.Counts.All())}
		}
		return c.rendered(render.HistoryJSON(c.stdout, stateModel(meta), entries))
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIAL\tTIME\tCOMMAND\tCOUNTS")
	for _, h := range hs {
		var parts []string
		for k, n := range h.Counts.All() {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", h.Serial, h.Time.Format(time.RFC3339), untrusted.Text(h.Command), strings.Join(parts, " "))
	}
	tw.Flush()
	return exitOK
}

// stateModel and nodeModel fill the renderers' models from the state's.
func stateModel(m state.Meta) render.StateInfo {
	return render.StateInfo{Lineage: m.Lineage, Serial: m.Serial}
}

func nodeModel(r state.Record) render.StateNode {
	return render.StateNode{Name: r.Name, Type: r.Type, Kind: r.Kind, ID: r.ID, Inputs: r.Inputs, Outputs: r.Outputs,
		Dependencies: r.Dependencies, Protect: r.Protect, RetainOnDelete: r.RetainOnDelete, DeleteBeforeReplace: r.DeleteBeforeReplace,
		Tainted: r.Tainted, Deposed: r.Deposed, Serial: r.Serial, UpdatedAt: r.UpdatedAt}
}

func printAttrs(c *cli, title string, m map[string]any) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(c.stdout, "%s:\n", title)
	for _, k := range sortedNames(m) {
		fmt.Fprintf(c.stdout, "  %s = %s\n", untrusted.Name(k), render.DisplayValue(m[k]))
	}
}

func (c *cli) suggestRecord(st store, name string) string {
	recs, err := st.List()
	if err != nil {
		return ""
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
	}
	return didYouMean(name, names)
}
