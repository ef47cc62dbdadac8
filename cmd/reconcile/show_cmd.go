package main

import (
	"errors"
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

var showCmd = &command{
	name: "show", args: "PLANFILE [--output text|json|markdown]",
	summary: "Show a saved plan as plan showed it. No cloud API is called.",
	detail: `Renders a plan saved with 'reconcile plan --out FILE', in the chosen output
format, exactly as plan printed it when it made the file (the same drift,
changes and outputs; secrets as (sensitive value)). Nothing is read from the
cloud, nothing is written, and the specs are not read.

The plan file is verified as apply verifies it: against the key of the state
it was made against (the backend and stack it names; --state and --stack,
when given, must name the same). A file changed since it was made, or made
against another state, is refused. When that state cannot be read (the file
was copied from a CI job, or etcd is out of reach), the plan is shown with a
warning that it could not be verified. When the state changed since the plan
was made, a note says that apply would refuse it.

Exit status: 0 shown, 1 error (including a plan file that fails verification).`,
	run: runShow,
}

func runShow(c *cli, o *cmdOpts, args []string) int {
	if len(args) != 1 {
		return c.errorf("show takes one argument, the plan file saved with 'reconcile plan --out FILE'; got %d", len(args))
	}
	path := args[0]
	pf, err := c.usePlanFile(path)
	if err != nil {
		return c.errorf("%v", err)
	}
	if code := c.verifyShownPlan(path, pf); code != exitOK {
		return code
	}
	if err := c.renderPlan(pf.Shown()); err != nil {
		return c.errorf("%v", err)
	}
	return exitOK
}

// verifyShownPlan verifies pf, read from path, against the key of the
// state it names, and notes on stderr a state that moved on since. A state
// that cannot be read is a warning: the plan is still shown.
func (c *cli) verifyShownPlan(path string, pf *plan.File) int {
	where := c.ws.backend.describe(c.ws.stack)
	st, err := c.openState(true, false)
	if err != nil {
		fmt.Fprintf(c.stderr, "Warning: the plan file %s could not be verified: %s.\nWhat follows is what the file says; 'reconcile apply %s' verifies it before applying anything.\n\n", path, untrusted.Text(err.Error()), path)
		return exitOK
	}
	defer st.Close()
	key, err := st.SecretKey()
	if err != nil {
		return c.errorf("plan file %s: verify it against the state at %s: %v", path, where, err)
	}
	if err := pf.Verify(key); err != nil {
		if errors.Is(err, plan.ErrFileChanged) {
			return c.errorf("plan file %s: %v (verified against the state at %s)", path, err, where)
		}
		return c.errorf("plan file %s: %v", path, err)
	}
	meta, err := st.Meta()
	if err != nil {
		return c.errorf("%v", err)
	}
	// The signature matched, so this is the plan's own state (its key).
	if meta.Serial != pf.Plan.Serial {
		fmt.Fprintf(c.stderr, "Note: the state at %s changed since the plan was made (serial %d then, %d now): apply would refuse it; make a new plan with 'reconcile plan --out FILE'.\n\n", where, pf.Plan.Serial, meta.Serial)
	}
	return exitOK
}
