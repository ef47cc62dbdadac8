package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/project"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
	"github.com/reconcile-dev/reconcile/state"
)

var validateCmd = &command{
	name: "validate", args: "[-f PATH]", spec: true,
	summary: "Check the specs: YAML, schemas, references, cycles and what they evaluate to. No network.",
	detail: `Every problem is reported at once, as FILE:LINE:COL: message, with a suggestion
when a name is close to a known one.

Every variable, whether anything uses it or not (as plan and Pulumi evaluate the
whole program), every output, and every resource's inputs are evaluated as far as
the specs and config give them; what only the cloud gives (a resource's outputs, a
lookup's results) is unknown here. So a function given what it cannot take
(fn::select out of range, fn::fromBase64 of no base64), a file a file function
cannot read, a value over the size limit, or an input the vendor's API would refuse
that the specs alone show (a relation a Datadog resource type does not have, a GCP
member string IAM rejects) is reported now, as plan would. --output json writes one document listing
them (docs/validate-json.md): file, line, column, severity, message, detail and
suggestion of each.

Exit status: 0 valid, 1 invalid.`,
	run: func(c *cli, o *cmdOpts, args []string) int {
		if len(args) > 0 {
			return c.errorf("validate takes no arguments, got %q", args)
		}
		if c.g.output == "json" {
			return c.validateJSON()
		}
		spec, diags, err := c.validateSpec()
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		c.printDiags(diags)
		if diags.HasErrors() {
			fmt.Fprintf(c.stderr, "%s in the specs\n", render.Count(countErrors(diags), "error", "errors"))
			return exitError
		}
		fmt.Fprintf(c.stdout, "The specs are valid: %s, %s, %s.\n", render.Count(len(spec.Resources), "resource", "resources"),
			render.Count(len(spec.Variables), "variable", "variables"), render.Count(len(spec.Outputs), "output", "outputs"))
		return exitOK
	},
}

// validateSpec reads and loads the specs, and evaluates offline what
// they alone give (eval.Offline) when they load: every variable, used or
// not, as plan evaluates it, and the inputs the drivers can tell offline
// that their API would refuse. The error is for specs that cannot be read.
func (c *cli) validateSpec() (*specs.Spec, diag.Diagnostics, error) {
	spec, diags, err := c.readSpec()
	if err != nil || diags.HasErrors() {
		return spec, diags, err
	}
	diags = append(diags, eval.Offline(spec, inputCheckers())...).Sort()
	if diags.HasErrors() {
		spec = nil
	}
	return spec, diags, nil
}

// validateJSON writes the validate document of docs/validate-json.md and
// returns the exit status.
func (c *cli) validateJSON() int {
	spec, diags, err := c.validateSpec()
	if err != nil {
		// The specs cannot be read at all: one diagnostic without a place.
		diags = diag.Diagnostics{{Severity: diag.Error, Summary: err.Error()}}
	}
	v := render.Validation{Diagnostics: diags}
	if spec != nil {
		v.Resources, v.Variables, v.Outputs = len(spec.Resources), len(spec.Variables), len(spec.Outputs)
	}
	if code := c.rendered(render.ValidateJSON(c.stdout, v)); code != exitOK {
		return code
	}
	if !v.Valid() {
		return exitError
	}
	return exitOK
}

var planCmd = &command{
	name: "plan", args: "[-f PATH] [--out FILE] [--refresh=false | --refresh-only] [--destroy] [--target NAME]... [--replace NAME]... [--allow-self-lockout] [--detailed-exitcode]", spec: true,
	summary: "Show what apply would change to make the cloud match the specs.",
	detail: `Plan reads the state and, unless --refresh=false, every managed resource from the
cloud, then shows per resource: create (+), update in place (~), replace (-/+ or +/-),
delete (-), read (<=) or import, with per-field before and after values and the fields
that force a replacement. Lookups whose arguments are known are read now; the others
show as (known after apply).

When the refresh finds objects changed outside reconcile since the last apply, the
plan shows them first, apart from the changes: "Objects changed outside reconcile
since the last apply", each field from its applied to its live value, objects
deleted outside reconcile, and lookups whose results changed (as 'reconcile drift'
reports them). The changes that follow compare the specs with the live objects, and
so undo that drift where the specs say otherwise. --refresh=false reads no managed
resource and trusts the state (lookups and gets are still read): no drift is shown.

--refresh-only plans only to accept the cloud's values into state, for each object
that changed (or was deleted) outside reconcile, and changes nothing in the cloud;
apply such a plan with 'reconcile apply FILE', or run 'reconcile apply
--refresh-only'. After it, 'reconcile drift' reports no drift and a plan shows the
changes that take the cloud back to the specs.

--destroy plans the deletion of every managed resource, in reverse dependency order
(what 'reconcile destroy' does), so that it can be saved, reviewed and applied with
'reconcile apply FILE'. protect blocks it, retainOnDelete forgets.

--target NAME (repeatable) limits the plan to NAME and what it depends on: nothing
else is read, evaluated or changed, and the plan says it is targeted. A NAME that
state manages but the specs no longer declare is deleted. With --destroy, only NAME
and the resources that depend on it are destroyed. Targeting is for exceptions (a
broken resource blocking the rest); a plan without it shows what else the specs need.

--replace NAME (repeatable) replaces the managed resource NAME even though nothing
forces it (the plan gives the reason "replacement requested"); 'reconcile state
taint NAME' makes the next plan replace it too.

Every write to an access policy (a GCP IAM policy, binding or member; a Datadog
restriction policy) is compared with the live policy, read now: the plan lists,
role by role, the members the apply removes (-) and adds (+), and the summary
counts the members removed ("1 to update (removes 3 members)"). A write that would
remove the caller's own IAM access (who reconcile calls Google as) is an error
naming the caller, the role and the policy; --allow-self-lockout lets it, and a
plan file records it. A Datadog policy that would lower the caller's own access
is an error with the reason Datadog would refuse it at apply, flag or not.

What an API would refuse of what the apply would send is an error of the plan, at
its place in the specs, before anything is changed: a relation a Datadog resource type
does not have, an IAM member string IAM rejects, OCI defined tags naming a tag
namespace or key the tenancy lacks, a model an endpoint would deploy that is gone or
not ACTIVE. The plan reads what it needs for that (the tenancy's tag namespaces, the
model), with --refresh=false too, and only for what the apply would send;
docs/types.md says what each type checks.

--out FILE saves the plan; 'reconcile apply FILE' applies exactly it, and refuses it
if the state or the specs changed since. 'reconcile show FILE' prints it again.

--output json writes the plan as one document (docs/plan-json.md); --output jsonl
writes events as the plan runs, one JSON object a line (docs/events-jsonl.md): the
cloud calls retried, the drift, each change, the outputs and a summary. Only events
go to stdout; messages for people go to stderr.

Plans open the state read-only: several plans run at once without blocking each
other. A plan started while an apply holds the state waits up to --lock-timeout for
it to finish, then fails naming the holder. The state is opened while the specs
load: specs with errors are reported without waiting for the lock.

On etcd, a plan writes nothing, so that a user who may only read the state (a
pull request's job) can run it: a stack that does not exist yet (the default
stack, or one with a Pulumi.<stack>.yaml) is planned from an empty state, every
resource to be created. Such a plan cannot be saved with --out, as a plan file
is signed with a key the stack's state holds: create the stack once with
'reconcile stack init NAME', run by a user who may write, then plan again. On a
local file, a plan starts the state file of such a stack.

Exit status: 0 success (with --detailed-exitcode: 0 no changes, 2 changes), 1 error.
Drift alone is not a change; with --refresh-only, drift to accept is.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.StringVar(&o.out, "out", "", "save the plan to FILE for a later 'reconcile apply FILE'")
		fs.BoolVar(&o.refresh, "refresh", true, "read every managed resource from the cloud before planning")
		fs.BoolVar(&o.refreshOnly, "refresh-only", false, "only accept into state what changed outside reconcile; change nothing in the cloud")
		fs.BoolVar(&o.detailed, "detailed-exitcode", false, "exit 0 when there are no changes, 2 when there are, 1 on error")
		fs.IntVar(&c.g.parallelism, "parallelism", 10, "how many cloud reads run at once")
		fs.BoolVar(&o.destroy, "destroy", false, "plan the deletion of every managed resource (with --target: of those and what depends on them)")
		selectionFlags(fs, o)
	},
	run: runPlan,
}

// selectionFlags declares --target and --replace, which plan and apply
// take alike, and --allow-self-lockout.
func selectionFlags(fs *flag.FlagSet, o *cmdOpts) {
	fs.Var(&o.targets, "target", "plan and apply only `NAME` and what it depends on (repeatable)")
	fs.Var(&o.replaces, "replace", "replace the managed resource `NAME` even if nothing forces it (repeatable)")
	lockoutFlag(fs, o)
}

// lockoutFlag declares --allow-self-lockout, which plan, apply and
// destroy take alike.
func lockoutFlag(fs *flag.FlagSet, o *cmdOpts) {
	fs.BoolVar(&o.allowLockout, "allow-self-lockout", false, "let IAM writes remove the caller's own access (recorded in the plan file)")
}

// plannerOptions are the planner's options from the flags of plan, apply
// and destroy. The plan is shown, saved or applied, each change once: its
// creates and updates are held packed meanwhile (planner.Options.Pack).
func (c *cli) plannerOptions(o *cmdOpts, destroy bool) planner.Options {
	return planner.Options{Refresh: o.refresh, RefreshOnly: o.refreshOnly, Destroy: destroy || o.destroy, Parallelism: c.g.parallelism,
		Targets: o.targets, Replace: o.replaces, AllowSelfLockout: o.allowLockout, Pack: true}
}

// checkPlanFlags refuses the flags of plan and apply that contradict
// each other.
func checkPlanFlags(o *cmdOpts, destroy bool) error {
	selecting := len(o.targets) > 0 || len(o.replaces) > 0 || o.destroy
	switch {
	case o.refreshOnly && !o.refresh:
		return fmt.Errorf("--refresh-only and --refresh=false contradict each other: a refresh-only plan is the refresh")
	case o.refreshOnly && selecting:
		return fmt.Errorf("--refresh-only accepts what changed outside reconcile for every node of state: it takes no --destroy, --target or --replace")
	case (destroy || o.destroy) && len(o.replaces) > 0:
		return fmt.Errorf("--replace asks for a replacement, which a destroy does not make: drop --replace or --destroy")
	}
	return nil
}

func runPlan(c *cli, o *cmdOpts, args []string) int {
	if len(args) > 0 {
		return c.errorf("plan takes no arguments, got %q (use -f PATH for the specs)", args)
	}
	if err := checkPlanFlags(o, false); err != nil {
		return c.errorf("%v", err)
	}
	ss := c.open(true)
	if ss == nil {
		return exitError
	}
	defer ss.close()
	spec, reg, st := ss.spec, ss.reg, ss.st
	if a, ok := st.(*absentStack); ok {
		if o.out != "" {
			return c.errorf("%v", a.saveError())
		}
		c.say(a.notice())
	}
	c.warnIntents(st)
	opts := c.plannerOptions(o, false)
	opts.ShowOnly = o.out == "" && c.g.output != "json"
	pl, diags := planner.Plan(c.ctx, spec, st, reg, opts)
	c.printDiags(diags)
	if diags.HasErrors() {
		return exitError
	}
	// The plan holds all that rendering and saving it need: the loaded
	// specs (on a large project, as much memory again as the plan) can go
	// before the text and the file are written.
	saved := plan.File{Plan: pl, Config: c.savedConfig(spec)}
	if o.out != "" {
		saved.Runs, saved.Cuts = apply.Hints(spec, pl)
	}
	spec, ss.spec = nil, nil
	if err := c.renderPlan(pl); err != nil {
		return c.errorf("%v", err)
	}
	if o.out != "" {
		cloud, err := c.cloudOf(reg, planVendors(pl))
		if err != nil {
			return c.errorf("save plan: %v", err)
		}
		saved.Cloud = cloud
		if err := c.savePlan(o.out, saved, st); err != nil {
			return c.errorf("%v", err)
		}
		if c.g.output == "text" {
			fmt.Fprintf(c.stdout, "\nSaved the plan to %s. To apply exactly it, run:\n  %s\n", o.out, c.applyCommand(o.out))
		}
	}
	if c.events != nil {
		// The summary ends the stream: after the plan file is saved, or
		// the error saying it could not be.
		c.events.PlanSummary(pl)
	}
	if o.detailed && pl.HasChanges() {
		return exitChanges
	}
	return exitOK
}

// renderPlan writes the plan in the chosen output format; with --output
// jsonl, its drift and changes as events (the summary comes later).
func (c *cli) renderPlan(pl *plan.Plan) error {
	opts := render.Options{Color: c.color(), Version: version}
	switch c.g.output {
	case "json":
		return render.PlanJSON(c.stdout, pl, opts)
	case "markdown":
		return render.PlanMarkdown(c.stdout, pl, opts)
	case "jsonl":
		c.events.Plan(pl)
		return c.events.Err()
	}
	return render.PlanText(c.stdout, pl, opts)
}

// savePlan writes pf (its plan, config, runs and cuts) to path, with where
// the plan was made.
func (c *cli) savePlan(path string, pf plan.File, st store) error {
	key, err := st.SecretKey()
	if err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	specPath, _ := filepath.Abs(c.g.specPath)
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	return writeFileAtomic(path, 0o600, func(w io.Writer) error {
		pf.SpecPath, pf.Backend, pf.Stack, pf.Schemas = specPath, ws.backend.url(), ws.stack, schemas.Digest()
		err := plan.WriteFile(w, pf, version, key)
		if err != nil {
			return fmt.Errorf("save plan: %w", err)
		}
		return nil
	})
}

// savedConfig returns the --config values a plan file records: those the
// specs declare, secrets left out.
func (c *cli) savedConfig(spec *specs.Spec) map[string]string {
	cfg := map[string]string{}
	for k, v := range c.g.config {
		name := k
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		if d, ok := spec.Config[name]; ok && !d.Secret {
			cfg[k] = v
		}
	}
	return cfg
}

// writeFileAtomic writes what write writes to a temporary file beside path,
// syncs it and renames it into place, so that readers never see half a
// file.
func writeFileAtomic(path string, mode os.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

var applyCmd = &command{
	name: "apply", args: "[-f PATH | PLANFILE] [--auto-approve] [--parallelism N] [--refresh-only] [--destroy] [--target NAME]... [--replace NAME]... [--allow-self-lockout]", spec: true,
	summary: "Make the cloud match the specs, in dependency order.",
	detail: `Without PLANFILE, apply plans first, shows the plan and asks for confirmation on
a terminal; without a terminal it needs --auto-approve. With PLANFILE (from
'reconcile plan --out'), it applies exactly that plan, and refuses it if the state
or the specs changed since it was made, or if it would run against another state,
stack, emulator or cloud account than the plan was made in (the OCI tenancy and
region, the Datadog org, the GCP project of the caller).

--refresh-only accepts the cloud's values into state for every object that changed
(or was deleted) outside reconcile since the last apply, and changes nothing in the
cloud: each drifted input takes its live value, outputs and lookup results too, and
an object deleted outside reconcile leaves state. The history records it as
"apply --refresh-only". Afterwards 'reconcile drift' reports no drift, and a plan
shows the changes that take the cloud back to the specs.

--destroy, --target NAME and --replace NAME (both repeatable) plan as plan's do (see
'reconcile plan -h'): apply only NAME and what it depends on, replace NAME even if
nothing forces it, or delete everything (what 'reconcile destroy' does). A plan
file records them: with PLANFILE they are refused.

--allow-self-lockout lets IAM writes remove the caller's own access, which a plan
otherwise refuses; a plan file records whether it was made with it, and with
PLANFILE the flag is refused. Every IAM write checks again as it is sent: unless
the plan allowed it, a write that would now remove the caller's access (the
policy changed since the plan) fails and writes nothing.

Independent resources are handled in parallel, up to --parallelism at once. State
is written after every operation. When one resource fails, only the resources that
depend on it are skipped; the rest complete, and the next plan picks up from there.
A replacement creates the new object first (unless deleteBeforeReplace) and deletes
the old one only after every resource that depends on it has moved to the new one;
an old object left behind (a dependent failed, its delete failed, the apply was
stopped) stays in state as deposed, is listed in the summary, and is deleted by the
next apply.

--output json writes the result as one document once the apply has ended
(docs/apply-json.md). --output jsonl writes events as it runs, one JSON object a line
(docs/events-jsonl.md): the changes planned, then the start, progress, retries and
end (complete, errored or skipped) of each operation, the outputs and a summary. Only
events go to stdout, every line whole even when the apply is stopped; messages for
people go to stderr.

On SIGINT or SIGTERM, apply starts no new operation, lets the running ones finish
for up to 20s (RECONCILE_STOP_GRACE), then abandons them, and exits 1 listing what
it left undone; a second signal abandons them at once (exit 130). Every create is
recorded as an intent, with its idempotency token, before it is sent: after any
interruption, even SIGKILL, the next apply first looks up what such a create made,
adopts it into state or forgets the create if it made nothing, then plans.

Exit status: 0 applied, 1 error (including any failed resource).`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.BoolVar(&o.autoApprove, "auto-approve", false, "apply without asking for confirmation")
		fs.IntVar(&c.g.parallelism, "parallelism", 10, "how many operations run at once")
		fs.BoolVar(&o.refresh, "refresh", true, "read every managed resource from the cloud before planning")
		fs.BoolVar(&o.refreshOnly, "refresh-only", false, "only accept into state what changed outside reconcile; change nothing in the cloud")
		fs.DurationVar(&o.progressPeriod, "progress-interval", 10*time.Second, "how often to report on an operation that is still running")
		fs.BoolVar(&o.destroy, "destroy", false, "delete every managed resource, as 'reconcile destroy' does")
		selectionFlags(fs, o)
	},
	run: func(c *cli, o *cmdOpts, args []string) int { return c.runApply(o, args, o.destroy) },
}

var destroyCmd = &command{
	name: "destroy", args: "[-f PATH] [--auto-approve] [--target NAME]... [--allow-self-lockout]", spec: true,
	summary: "Delete every managed resource, in reverse dependency order.",
	detail: `Resources with protect: true (as recorded in state) are not deleted: the
destroy reports them as errors. Resources with retainOnDelete are forgotten from
state without being deleted. Resources read with get and lookups are never deleted.

--target NAME (repeatable) deletes only NAME and the resources that depend on it.
Deleting an IAM policy, binding or member that grants the caller (who reconcile
calls Google as) a role needs --allow-self-lockout. To review a destroy before it runs, save it with 'reconcile plan --destroy --out
FILE' and apply that file.

--output json and --output jsonl write what apply's do (docs/apply-json.md,
docs/events-jsonl.md).

Exit status: 0 destroyed, 1 error.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.BoolVar(&o.autoApprove, "auto-approve", false, "destroy without asking for confirmation")
		fs.IntVar(&c.g.parallelism, "parallelism", 10, "how many operations run at once")
		fs.DurationVar(&o.progressPeriod, "progress-interval", 10*time.Second, "how often to report on an operation that is still running")
		fs.Var(&o.targets, "target", "destroy only `NAME` and the resources that depend on it (repeatable)")
		lockoutFlag(fs, o)
	},
	run: func(c *cli, o *cmdOpts, args []string) int {
		o.refresh = true
		return c.runApply(o, args, true)
	},
}

// runApply runs apply or destroy: from a saved plan file, or from a plan
// made now and confirmed.
func (c *cli) runApply(o *cmdOpts, args []string, destroy bool) int {
	if err := c.checkApplyArgs(o, args, destroy); err != nil {
		return c.errorf("%v", err)
	}
	var pf *plan.File
	if len(args) == 1 {
		var err error
		if pf, err = c.usePlanFile(args[0]); err != nil {
			return c.errorf("%v", err)
		}
	}
	ss := c.open(false)
	if ss == nil {
		return exitError
	}
	defer ss.close()
	spec, reg, st := ss.spec, ss.reg, ss.st
	key, err := st.SecretKey()
	if err != nil {
		return c.errorf("%v", err)
	}
	// A plan file is verified whole before anything runs.
	if pf != nil {
		if err := pf.Verify(key); err != nil {
			return c.errorf("plan file %s: %v", args[0], err)
		}
		if err := c.checkPlanCloud(args[0], pf, reg); err != nil {
			return c.errorf("%v", err)
		}
	}
	if !c.resolveIntents(st, reg) {
		return exitError
	}
	var pl *plan.Plan
	var records []state.LazyRecord
	if pf != nil {
		meta, err := st.Meta()
		if err != nil {
			return c.errorf("%v", err)
		}
		if err := apply.CheckPlan(pf, meta, key, spec); err != nil {
			return c.errorf("%v", err)
		}
		pl = pf.Plan
		if c.events != nil {
			// What is carried out, as without a plan file; its secrets,
			// sealed in the file, shown as such.
			c.events.Plan(pf.Shown())
		}
	} else {
		// The records the plan and the apply start from, listed once,
		// before the plan, while little else is in memory: listing maps
		// much of the state file, whose pages are let go once read.
		if records, err = state.ListLazy(st); err != nil {
			return c.errorf("%v", err)
		}
		if pl = c.planToApply(o, ss, destroy, records); pl == nil {
			return exitError
		}
	}
	return c.applyPlan(o, ss, pl, destroy, records)
}

// checkApplyArgs refuses the arguments and flags of apply or destroy that
// contradict each other.
func (c *cli) checkApplyArgs(o *cmdOpts, args []string, destroy bool) error {
	switch {
	case len(args) > 1 || (destroy && len(args) > 0):
		return fmt.Errorf("%s takes at most one argument (a plan file), got %q", c.cmd, args)
	case len(args) == 1 && c.set["f"]:
		return fmt.Errorf("apply takes either -f PATH or a plan file, not both: the plan file records the specs it was made from")
	case len(args) == 1 && o.refreshOnly:
		return fmt.Errorf("apply takes either --refresh-only or a plan file, not both: make the plan file with 'reconcile plan --refresh-only --out FILE'")
	case len(args) == 1 && (o.destroy || len(o.targets) > 0 || len(o.replaces) > 0):
		return fmt.Errorf("apply takes either --destroy, --target and --replace or a plan file, not both: the plan file records them; make it with 'reconcile plan --out FILE' and these flags")
	case len(args) == 1 && o.allowLockout:
		return fmt.Errorf("apply takes either --allow-self-lockout or a plan file, not both: the plan file records whether it was made with --allow-self-lockout, and its apply does as it says; make it with 'reconcile plan --allow-self-lockout --out FILE'")
	}
	return checkPlanFlags(o, destroy)
}

// usePlanFile reads the plan file at path and points the command at what
// it was made from: its specs, state, stack and configuration (a --config
// given now still wins).
func (c *cli) usePlanFile(path string) (*plan.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read plan file: %v", err)
	}
	read := plan.ReadFileToApply
	if c.g.output == "jsonl" {
		read = plan.ReadFile // the plan event shows every change
	}
	p, err := read(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read plan file %s: %v", path, err)
	}
	c.g.specPath = p.SpecPath
	if p.Schemas == schemas.Digest() {
		c.planSpecHash = p.Plan.SpecHash
	}
	c.planCuts = apply.Skip(p.Cuts)
	if err := c.usePlanTarget(&p); err != nil {
		return nil, fmt.Errorf("plan file %s: %v", path, err)
	}
	for k, v := range p.Config {
		if _, set := c.g.config[k]; !set {
			c.g.config[k] = v
		}
	}
	return &p, nil
}

// planToApply makes the plan of an apply or destroy without a plan file,
// shows it, and asks for confirmation unless --auto-approve. It returns
// nil, after saying why, when there is nothing to apply.
func (c *cli) planToApply(o *cmdOpts, ss *session, destroy bool, records []state.LazyRecord) *plan.Plan {
	opts := c.plannerOptions(o, destroy)
	opts.Records = records // shared with the apply, read once
	// The apply reads again the records whose values the plan let go: a
	// transaction each on a local file, a round trip each on etcd.
	if ws, err := c.workspace(); err == nil { // read already, to open the state
		opts.KeepRecordValues = ws.backend.etcd != nil
	}
	opts.KeepInputs = true // the apply follows, with these specs
	pl, diags := planner.Plan(c.ctx, ss.spec, ss.st, ss.reg, opts)
	c.printDiags(diags)
	if diags.HasErrors() {
		return nil
	}
	if c.g.output == "text" || c.g.output == "jsonl" {
		if err := c.renderPlan(pl); err != nil {
			c.errorf("%v", err)
			return nil
		}
	}
	if !pl.HasChanges() || o.autoApprove {
		return pl
	}
	if !c.interactive() {
		c.errorf("%s needs confirmation: pass --auto-approve, or save a plan with 'reconcile plan --out FILE' and apply that file", c.cmd)
		return nil
	}
	if !c.confirm() {
		fmt.Fprintf(c.people(), "%s cancelled; nothing was changed.\n", strings.ToUpper(c.cmd[:1])+c.cmd[1:])
		return nil
	}
	return pl
}

// people is where messages for people go: stdout in text, stderr when
// stdout holds a document or an event stream.
func (c *cli) people() io.Writer {
	if c.g.output == "text" {
		return c.stdout
	}
	return c.stderr
}

// applyPlan applies pl, showing progress, and reports the result.
func (c *cli) applyPlan(o *cmdOpts, ss *session, pl *plan.Plan, destroy bool, records []state.LazyRecord) int {
	observe := func(report.Event) {}
	switch c.g.output {
	case "text":
		observe = render.NewProgress(c.stdout).Event
	case "jsonl":
		observe = c.events.Op
	}
	if pl.RefreshOnly {
		res, err := apply.RefreshOnly(c.ctx, pl, ss.st, apply.Options{Observer: observe, Command: c.cmd + " --refresh-only"})
		if err != nil {
			return c.errorf("%v", err)
		}
		return c.reportApply(res, render.RunRefreshOnly)
	}
	// Every IAM write refuses, as it is sent, to remove the caller's own
	// access, unless the plan allows it (its file records whether).
	ctx := resources.WithSelfLockout(c.ctx, pl.AllowSelfLockout)
	res, err := apply.Apply(ctx, pl, ss.spec, ss.st, ss.reg, apply.Options{
		Parallelism: c.g.parallelism, Observer: observe, ProgressInterval: o.progressPeriod, Command: c.cmd, Consume: true, Records: records,
	})
	if err != nil {
		return c.errorf("%v", err)
	}
	run := render.RunApply
	if destroy || pl.Destroy {
		run = render.RunDestroy // also a plan file of 'plan --destroy'
	}
	return c.reportApply(res, run)
}

// usePlanTarget points the command at the backend and stack a saved plan
// was made against: it is applied there, or not at all. A location given
// explicitly (--state, RECONCILE_STATE, Pulumi.yaml's backend, --stack,
// RECONCILE_STACK) that is another is refused.
func (c *cli) usePlanTarget(pf *plan.File) error {
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	explicit := c.set["state"] || os.Getenv("RECONCILE_STATE") != "" || ws.project.Backend != ""
	if explicit && ws.backend.url() != pf.Backend {
		return fmt.Errorf("it was made against the state at %s, not %s: it is applied where it was made; drop --state (and RECONCILE_STATE), or make a new plan", pf.Backend, ws.backend.url())
	}
	if (c.set["stack"] || os.Getenv("RECONCILE_STACK") != "") && ws.stack != pf.Stack {
		return fmt.Errorf("it was made for stack %q, not %q: drop --stack (and RECONCILE_STACK), or make a new plan for %q", pf.Stack, ws.stack, ws.stack)
	}
	b, err := parseBackend(pf.Backend)
	if err != nil {
		return fmt.Errorf("its state location: %w", err)
	}
	if !project.ValidStackName(pf.Stack) {
		return fmt.Errorf("its stack %q is not a valid stack name", pf.Stack)
	}
	ws.backend, ws.stack = b, pf.Stack
	return nil
}

func (c *cli) confirm() bool {
	fmt.Fprintf(c.people(), "\nDo you want to %s? Only 'yes' is accepted: ", c.cmd)
	line, _ := bufio.NewReader(c.stdin).ReadString('\n')
	return strings.TrimSpace(line) == "yes"
}

// reportApply prints an apply's result in the chosen output format and
// returns the exit status: an apply that was stopped, or left anything
// undone, exits 1.
func (c *cli) reportApply(res *report.Apply, run render.Run) int {
	switch c.g.output {
	case "json":
		if err := render.ApplyJSON(c.stdout, res, run); err != nil {
			return c.errorf("%v", err)
		}
	case "jsonl":
		render.ApplyErrorsText(c.stderr, res) // for people reading the log
		c.events.ApplySummary(res, run)
	default:
		render.ApplyText(c.stdout, c.stderr, res, run)
	}
	if !res.Complete() || res.Stopped != "" {
		return exitError
	}
	return exitOK
}

// rendered returns the exit status of a command whose last step was to
// render its output: 0, or 1 after reporting err.
func (c *cli) rendered(err error) int {
	if err != nil {
		return c.errorf("%v", err)
	}
	return exitOK
}

var schemaCmd = &command{
	name: "schema", args: "[TYPE]",
	summary: "Print the JSON Schema of a resource or lookup type, or list the types.",
	detail:  "TYPE may be the canonical token or an alias, e.g. oci:AiLanguage:Endpoint or oci:ai_language:Endpoint. 'document' prints the schema of a spec file.",
	run: func(c *cli, o *cmdOpts, args []string) int {
		switch len(args) {
		case 0:
			for _, t := range schemas.Tokens() {
				s, _ := schemas.Lookup(t)
				fmt.Fprintf(c.stdout, "%-45s %s\n", t, s.Kind)
			}
			return exitOK
		case 1:
			if args[0] == "document" {
				c.stdout.Write(schemas.Document().JSON())
				return exitOK
			}
			s, ok := schemas.Lookup(args[0])
			if !ok {
				var names []string
				for _, t := range schemas.Tokens() {
					s, _ := schemas.Lookup(t)
					names = append(names, t)
					names = append(names, s.Aliases...)
				}
				return c.errorf("unknown type %q%s; run 'reconcile schema' for the list", args[0], didYouMean(args[0], names))
			}
			c.stdout.Write(s.JSON())
			return exitOK
		}
		return c.errorf("schema takes at most one TYPE, got %q", args)
	},
}

var versionCmd = &command{
	name: "version", args: "", summary: "Print the version of reconcile, the commit and the Go version it was built with.",
	detail: `A release build says its tag (v1.2.3), as does a 'go install' of a tagged
version; any other build says v0.0.0-dev+COMMIT (.dirty when the checkout had
changes). The commit is unknown to a 'go install', which carries none.
--output json adds the version of the plan files it reads and writes
(docs/state-json.md).`,
	run: func(c *cli, o *cmdOpts, args []string) int {
		if c.g.output == "json" {
			b := thisBuild
			return c.rendered(render.VersionJSON(c.stdout, render.Version{Version: b.Version, Commit: b.Commit, Go: b.Go, Platform: b.Platform}, plan.FileVersion))
		}
		fmt.Fprintln(c.stdout, thisBuild)
		return exitOK
	},
}
