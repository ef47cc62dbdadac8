package main

import (
	"flag"
	"fmt"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

var importCmd = &command{
	name: "import", args: "NAME ID --type TYPE",
	summary: "Adopt an existing object into state and print the YAML that declares it.",
	detail: `Import reads the object ID of type TYPE from the cloud, records it in state as
NAME, and prints the spec text that declares it as it is. Paste that into your
specs: the next plan then shows no changes for it. Nothing in the cloud changes.
Inputs that are empty, and tags the cloud adds by itself (OCI's Oracle-Tags
defined tags), are left out of the text and of state: they stay the cloud's.

To adopt an object during an apply instead, declare it with options.import: ID.

In a new project, import starts the state of the default stack, or of a
stack that has a Pulumi.<stack>.yaml, as apply does; create any other
stack first with 'reconcile stack init NAME'.

Exit status: 0 imported, 1 error.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.StringVar(&o.typ, "type", "", "the resource type, e.g. oci:AiLanguage:Endpoint (required)")
	},
	run: func(c *cli, o *cmdOpts, args []string) int {
		if len(args) != 2 {
			return c.errorf("import takes NAME and ID, got %s; e.g. reconcile import sentiment ocid1.ailanguageendpoint.oc1... --type oci:AiLanguage:Endpoint", render.Count(len(args), "argument", "arguments"))
		}
		if o.typ == "" {
			return c.errorf("import needs --type TYPE; run 'reconcile schema' for the types")
		}
		reg, cleanup, err := c.registry()
		if err != nil {
			return c.errorf("%v", err)
		}
		defer cleanup()
		// A new project has no state yet: import may start it, as plan
		// and apply do (of a declared stack only).
		st, err := c.openState(false, true)
		if err != nil {
			return c.errorf("%v", err)
		}
		defer st.Close()
		rec, err := apply.Import(c.ctx, st, reg, args[0], o.typ, args[1])
		if err != nil {
			return c.errorf("import %s: %v", args[0], err)
		}
		text, err := render.DeclarationYAML(rec.Name, rec.Type, rec.Inputs)
		if err != nil {
			return c.errorf("%v", err)
		}
		fmt.Fprintf(c.stderr, "Imported %s (%s) as %s. Add this to your specs:\n\n", untrusted.Text(rec.ID), untrusted.Text(rec.Type), untrusted.Quote(rec.Name))
		fmt.Fprint(c.stdout, text)
		return exitOK
	},
}
