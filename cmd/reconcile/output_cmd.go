package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/outputs"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/state"
)

var outputCmd = &command{
	name: "output", args: "[NAME] [--output json] [--show-secrets [-f PATH]]", spec: true,
	summary: "Print the outputs recorded by the last complete apply.",
	detail: `Prints the stack outputs (the outputs: section of the specs) as the last complete
apply recorded them in state, one "name = value" line each, or with NAME the value
of that output alone. Nothing is read from the cloud, and without --show-secrets
the specs are not read either (-f PATH still finds Pulumi.yaml and the state).

--output json writes one document (docs/output-json.md): each output's value and
whether it is sensitive, with the serial and time the apply recorded them at; with
NAME, the value alone as JSON (null for a secret not shown), for scripts:

  reconcile output endpointId --output json | jq -r .

Secrets: state holds a secret output only as a salted digest, never in clear, so a
secret prints as (sensitive value), or null in JSON. --show-secrets computes a secret
output again from the specs (-f PATH, with their config values: secret ones from
--config or Pulumi.<stack>.yaml) and the records of state, and prints it in clear
only if it is the value the last apply recorded (its digest matches). An output made
from a secret that state keeps only as a digest, such as a resource's secret input,
cannot be computed again: it is not shown, and a warning (an error with NAME) says why.

A complete apply records the outputs; a targeted one (--target) records those of
what it planned and keeps the others; a complete destroy leaves none; an apply that
failed or was stopped changes none.

Exit status: 0 printed, 1 error (an unknown NAME, or with NAME a secret that cannot
be shown).`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.BoolVar(&o.showSecrets, "show-secrets", false, "print secret outputs in clear, where they can be computed again from the specs and state")
	},
	run: runOutput,
}

func runOutput(c *cli, o *cmdOpts, args []string) int {
	switch {
	case len(args) > 1:
		return c.errorf("output takes at most one NAME, got %q", args)
	case c.g.output == "markdown":
		return c.errorf("output prints text or json (--output json), not markdown")
	}
	c.secretsOnStdout = o.showSecrets
	st, err := c.openState(true, false)
	if err != nil {
		return c.errorf("%v", err)
	}
	defer st.Close()
	where := c.ws.backend.describe(c.ws.stack)
	rec, ok, err := st.Outputs()
	if err != nil {
		return c.errorf("%v", err)
	}
	const how = "a complete 'reconcile apply' records them (an apply by a reconcile older than this one did not)"
	if !ok {
		if len(args) == 1 {
			return c.errorf("no outputs are recorded in the state at %s, so none named %q: %s", where, args[0], how)
		}
		if c.g.output == "json" {
			return c.renderOutputs(nil, nil, args)
		}
		fmt.Fprintf(c.stderr, "No outputs are recorded in the state at %s: %s.\n", where, how)
		return exitOK
	}
	names := slices.Sorted(maps.Keys(rec.Values))
	if len(names) == 0 && len(args) == 0 && c.g.output != "json" {
		fmt.Fprintf(c.stderr, "No outputs: the last %s (serial %d) recorded none.\n", rec.Command, rec.Serial)
		return exitOK
	}
	if len(args) == 1 {
		name := args[0]
		if _, ok := rec.Values[name]; !ok {
			recorded := "none"
			if len(names) > 0 {
				recorded = strings.Join(names, ", ")
			}
			return c.errorf("no output named %q was recorded by the last apply%s; recorded: %s (an output added to the specs since is recorded by the next apply)", name, didYouMean(name, names), recorded)
		}
		names = []string{name}
	}
	shown := map[string]render.OutputValue{}
	for _, name := range names {
		v := rec.Values[name]
		shown[name] = render.OutputValue{Value: v, Sensitive: value.ContainsSealed(v)}
	}
	if o.showSecrets {
		if code := c.revealOutputs(st, rec, shown, len(args) == 1); code != exitOK {
			return code
		}
	}
	return c.renderOutputs(&rec, shown, args)
}

// revealOutputs replaces, in shown, the secret outputs that can be
// computed again from the specs and state by their values in clear. One
// that cannot is a warning, or with one NAME asked for, an error.
func (c *cli) revealOutputs(st store, rec state.Outputs, shown map[string]render.OutputValue, one bool) int {
	var secret []string
	for _, name := range slices.Sorted(maps.Keys(shown)) {
		if shown[name].Sensitive {
			secret = append(secret, name)
		}
	}
	if len(secret) == 0 {
		return exitOK
	}
	spec, ok := c.loadSpec()
	if !ok {
		return exitError
	}
	key, err := st.SecretKey()
	if err != nil {
		return c.errorf("%v", err)
	}
	for _, name := range secret {
		v, err := outputs.Reveal(spec, st, key, name, rec.Values[name])
		switch {
		case err == nil:
			shown[name] = render.OutputValue{Value: v, Sensitive: true}
		case one && errors.Is(err, outputs.ErrNotShown):
			return c.errorf("output %q is secret and cannot be shown: %v", name, err)
		case errors.Is(err, outputs.ErrNotShown):
			fmt.Fprintf(c.stderr, "Warning: output %s is secret and cannot be shown: %s.\n", untrusted.Quote(name), untrusted.Text(err.Error()))
		default:
			return c.errorf("%v", err)
		}
	}
	return exitOK
}

// renderOutputs prints shown, recorded as rec says (nil: nothing is
// recorded), in the output format: all of them, or the one of args.
func (c *cli) renderOutputs(rec *state.Outputs, shown map[string]render.OutputValue, args []string) int {
	var err error
	switch {
	case len(args) == 1 && c.g.output == "json":
		err = render.OutputJSON(c.stdout, shown[args[0]])
	case len(args) == 1:
		err = render.OutputText(c.stdout, shown[args[0]])
	case c.g.output == "json":
		var r *render.Recorded
		if rec != nil {
			r = &render.Recorded{Serial: rec.Serial, Time: rec.Time, Command: rec.Command}
		}
		err = render.OutputsJSON(c.stdout, r, shown)
	default:
		err = render.OutputsText(c.stdout, shown)
	}
	if err != nil {
		return c.errorf("%v", err)
	}
	return exitOK
}
