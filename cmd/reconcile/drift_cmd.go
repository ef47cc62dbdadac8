package main

import (
	"flag"

	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/render"
)

var driftCmd = &command{
	name: "drift", args: "[-f PATH]", spec: true,
	summary: "Report where the cloud moved away from what was last applied. Changes nothing.",
	detail: `Drift reads every managed resource, get and lookup recorded in state from the
cloud, in parallel, and compares it with what was last applied:
  - each input field that differs, from the applied to the live value, as a
    plan shows it (lists and maps element by element; secrets are named but
    never shown);
  - resources deleted outside reconcile;
  - lookups whose results changed (a new IAM policy etag, and which members
    were added to or removed from which role).
Only fields that were applied are compared: a field the specs leave to the
cloud, output-only fields (state, timeUpdated, systemTags, lifecycleDetails)
and fields named by ignoreChanges are never drift. Values compare after the
cloud's own normalisation: set-like lists (bindings, principals, IAM members)
without regard to order, an empty tag map as no tags, inferenceUnits absent as
its default 1. Tags OCI adds by itself to every new resource (the defined tags
of the Oracle-Tags namespace, such as Oracle-Tags.CreatedBy and CreatedOn) are
the cloud's: they are drift only for a key the specs set themselves.

The specs (-f) are read for ignoreChanges. Run it from cron: --output json is
a versioned format (docs/drift-json.md) to forward to alerting, --output
markdown suits an issue or chat message, and text ends with a one-line summary.

To accept the drift into state, run 'reconcile apply --refresh-only'; to undo
it, run 'reconcile apply', whose plan shows the drift apart from the changes.

Exit status: 0 no drift, 2 drift, 1 error (also when some node could not be read).`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.IntVar(&c.g.parallelism, "parallelism", 10, "how many cloud reads run at once")
	},
	run: runDrift,
}

func runDrift(c *cli, o *cmdOpts, args []string) int {
	if len(args) > 0 {
		return c.errorf("drift takes no arguments, got %q (use -f PATH for the specs)", args)
	}
	ss := c.open(true)
	if ss == nil {
		return exitError
	}
	defer ss.close()
	c.warnIntents(ss.st)
	rep, err := refresh.Drift(c.ctx, ss.spec, ss.st, ss.reg, c.g.parallelism)
	if err != nil {
		return c.errorf("%v", err)
	}
	switch c.g.output {
	case "json":
		err = render.DriftJSON(c.stdout, rep)
	case "markdown":
		err = render.DriftMarkdown(c.stdout, rep)
	default:
		err = render.DriftText(c.stdout, rep)
	}
	if err != nil {
		return c.errorf("%v", err)
	}
	switch {
	case len(rep.Errors) > 0:
		return exitError
	case rep.HasDrift():
		return exitChanges
	}
	return exitOK
}
