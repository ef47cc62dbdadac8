package main

import (
	"fmt"
	"strings"
	"time"

	"reconcile/engine/apply"
	"reconcile/engine/report"
	"reconcile/resources"
)

// resolveIntents resolves, before anything else, the creates that an
// earlier run started but did not see to their end (see
// engine.ResolveIntents), and prints what it did. It reports false after
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
	w := c.stdout
	if c.g.output != "text" {
		w = c.stderr // stdout is for the JSON or markdown document
	}
	var names []string
	for _, in := range ins {
		names = append(names, in.Name)
	}
	fmt.Fprintf(w, "Resolving %d create(s) that an earlier run started but did not finish (%s), by their idempotency tokens:\n", len(ins), strings.Join(names, ", "))
	rep, err := apply.ResolveIntents(c.ctx, st, reg, apply.ResolveOptions{
		Parallelism: c.g.parallelism,
		Observer: func(e report.Event) {
			if e.Phase == report.Running {
				msg := ""
				if e.Message != "" {
					msg = " (" + e.Message + ")"
				}
				fmt.Fprintf(w, "  %s: still resolving... [%s elapsed]%s\n", e.Addr, e.Elapsed.Round(100*time.Millisecond), msg)
			}
		},
	})
	for _, r := range rep.Intents {
		when := r.Time.UTC().Format(time.RFC3339)
		switch r.Outcome {
		case report.IntentAdopted:
			fmt.Fprintf(w, "  %s: adopted %s, made by the create started %s\n", r.Name, r.ID, when)
			if r.Tainted != "" {
				fmt.Fprintf(w, "  %s: it is not usable (%s): the plan replaces it\n", r.Name, r.Tainted)
			}
		case report.IntentRecorded:
			fmt.Fprintf(w, "  %s: %s was recorded already; its create has ended and its record is up to date\n", r.Name, r.ID)
		case report.IntentCleared:
			fmt.Fprintf(w, "  %s: the create started %s made nothing; the plan creates it\n", r.Name, when)
		case report.IntentSuperseded:
			fmt.Fprintf(w, "  %s: recorded since as %s; the create started %s is forgotten\n", r.Name, r.ID, when)
		case report.IntentKept:
			fmt.Fprintf(c.stderr, "Warning: %s: could not tell yet what the create started %s made: %v.\n"+
				"  It stays recorded as interrupted. When apply creates %s with the same inputs (secrets included), it first looks again, with them, and adopts what it finds;\n"+
				"  with other inputs it refuses to create %s: look for the object the create made and adopt it with 'reconcile import %s ID --type %s', or if there is none, forget the create with 'reconcile state rm %s'.\n",
				r.Name, when, r.Err, r.Name, r.Name, r.Name, r.Type, r.Name)
		}
	}
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
	var names []string
	for _, in := range ins {
		names = append(names, in.Name)
	}
	fmt.Fprintf(c.stderr, "Warning: %d create(s) started by an earlier run did not finish (%s). The next apply or destroy resolves them before it plans, adopting what they made (found by their idempotency tokens); this %s is made without them.\n",
		len(ins), strings.Join(names, ", "), c.cmd)
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

// reportStopped reports an apply or destroy that was stopped before it was
// done, and returns its exit status.
func (c *cli) reportStopped(res *report.Apply, destroy bool) int {
	verb := "Apply"
	if destroy {
		verb = "Destroy"
	}
	interrupted := make([]string, 0, len(res.Interrupted))
	for _, f := range res.Interrupted {
		interrupted = append(interrupted, f.Addr)
	}
	if c.g.output == "json" {
		failed := []map[string]string{}
		for _, f := range res.Failed {
			failed = append(failed, map[string]string{"address": f.Addr, "position": f.Pos.String(), "error": f.Err.Error()})
		}
		notStarted := append([]string{}, res.NotStarted...)
		c.writeJSON(map[string]any{"format_version": "1.0", "counts": actionCounts(res.Counts), "skipped": res.Skipped, "failed": failed,
			"stopped": res.Stopped, "interrupted": interrupted, "not_started": notStarted})
		return exitError
	}
	w := c.stdout
	if len(res.Interrupted)+len(res.NotStarted)+len(res.Failed)+len(res.Skipped) == 0 {
		fmt.Fprintf(w, "\n%s %s: %s; every operation it had started finished, and none was left to start.\n", verb, res.Stopped, summary(res.Counts))
	} else {
		fmt.Fprintf(w, "\n%s %s before it was done: %s; %d interrupted, %d not started, %d failed, %d skipped.\n",
			verb, res.Stopped, summary(res.Counts), len(res.Interrupted), len(res.NotStarted), len(res.Failed), len(res.Skipped))
	}
	if len(interrupted) > 0 {
		fmt.Fprintf(w, "Interrupted while running (the next run finds out what they did): %s\n", strings.Join(interrupted, ", "))
	}
	if len(res.NotStarted) > 0 {
		fmt.Fprintf(w, "Not started: %s\n", strings.Join(res.NotStarted, ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, "Skipped because a dependency failed: %s\n", strings.Join(res.Skipped, ", "))
	}
	for _, f := range append(append([]report.NodeError(nil), res.Failed...), res.Interrupted...) {
		where := ""
		if f.Pos.IsValid() {
			where = " (" + f.Pos.String() + ")"
		}
		fmt.Fprintf(c.stderr, "Error: %s%s: %v\n", f.Addr, where, f.Err)
	}
	fmt.Fprintf(w, "What completed is saved in state; run the same command again to continue.\n")
	return exitError
}
