package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/specs"
)

var graphCmd = &command{
	name: "graph", args: "[-f PATH] [--format dot|mermaid] [PLANFILE]", spec: true,
	summary: "Print the dependency graph of the specs, as DOT or Mermaid.",
	detail: `Prints every config entry, variable, lookup, resource, get and output of the
specs, and an arrow from each to what depends on it (A -> B: B depends on A, and is
applied after it). --format dot (the default) is Graphviz's language:

  reconcile graph | dot -Tsvg > graph.svg

--format mermaid is a Mermaid flowchart, which GitHub draws in Markdown inside a
` + "```mermaid" + ` block.

With PLANFILE (from 'reconcile plan --out'), the graph is of the specs the plan was
made from, and each node is coloured by the action the plan takes on it: create
green, update yellow, replace orange, delete red, read blue, no-op grey (import
purple, forget brown, refresh cyan); a legend names the colours, and resources the
plan deletes that the specs no longer declare are drawn dashed. The plan file is
verified as 'reconcile show' verifies it.

No cloud API is called. Names come from the specs and are never written as DOT or
Mermaid syntax: nodes have generated ids (n1, n2, ...), and names appear only in
escaped labels.

Exit status: 0 printed, 1 error.`,
	flags: func(fs *flag.FlagSet, c *cli, o *cmdOpts) {
		fs.StringVar(&o.format, "format", "dot", "the graph language: dot or mermaid")
	},
	run: runGraph,
}

func runGraph(c *cli, o *cmdOpts, args []string) int {
	switch {
	case len(args) > 1:
		return c.errorf("graph takes at most one argument, a plan file; got %q", args)
	case len(args) == 1 && c.set["f"]:
		return c.errorf("graph takes either -f PATH or a plan file, not both: the plan file records the specs it was made from")
	case c.set["output"]:
		return c.errorf("graph writes DOT or Mermaid: choose with --format dot|mermaid, not --output")
	}
	write := render.GraphDOT
	switch o.format {
	case "dot":
	case "mermaid":
		write = render.GraphMermaid
	default:
		return c.errorf("--format must be dot or mermaid, got %q%s", o.format, didYouMean(o.format, []string{"dot", "mermaid"}))
	}
	var p *plan.Plan
	if len(args) == 1 {
		pf, err := c.usePlanFile(args[0])
		if err != nil {
			return c.errorf("%v", err)
		}
		if code := c.verifyShownPlan(args[0], pf); code != exitOK {
			return code
		}
		p = pf.Plan
	}
	spec, ok := c.loadSpec()
	if !ok {
		return exitError
	}
	if p != nil && !planFits(spec, p) {
		fmt.Fprintf(c.stderr, "Note: the specs at %s changed since the plan was made: the graph is of the specs as they are now, coloured by the plan where it names a node.\n\n", c.g.specPath)
	}
	if err := write(c.stdout, render.GraphOf(specGraph(spec), p)); err != nil {
		return c.errorf("%v", err)
	}
	return exitOK
}

// planFits reports whether p names the nodes of spec: a change for each
// node it plans, and (unless it is targeted, a destroy or refresh-only)
// one for every resource. Config values are not compared: graph does not
// need them, so secret ones are not asked for again.
func planFits(spec *specs.Spec, p *plan.Plan) bool {
	if p.RefreshOnly {
		return true // its changes are the nodes of state
	}
	planned := map[string]bool{}
	for _, ch := range p.Changes {
		if ch.Action == plan.Delete || ch.Action == plan.Forget {
			continue
		}
		_, isVariable := spec.Variables[ch.Addr]
		_, isResource := spec.Resources[ch.Addr]
		if !isVariable && !isResource {
			return false
		}
		planned[ch.Addr] = true
	}
	if len(p.Targets) > 0 || p.Destroy {
		return true
	}
	for name := range spec.Resources {
		if !planned[name] {
			return false
		}
	}
	return true
}

// specGraph is the graph of spec as render.GraphOf draws it: every node in
// dependency order with its kind and type, and the dependencies of nodes
// and outputs.
func specGraph(spec *specs.Spec) render.SpecGraph {
	dg := spec.Graph()
	sg := render.SpecGraph{Deps: dg.DepsMap(), OutputDeps: map[string][]string{}}
	names := slices.Clone(dg.Order())
	for _, name := range slices.Sorted(maps.Keys(sg.Deps)) {
		if !slices.Contains(names, name) {
			names = append(names, name) // on a cycle: specs refuse these, but draw them anyway
		}
	}
	for _, name := range names {
		n := render.GraphNode{Name: name}
		switch {
		case spec.Config[name] != nil:
			n.Kind = "config"
		case spec.Variables[name] != nil:
			n.Kind = "variable"
			if inv, ok := spec.Variables[name].Expr.(*specs.Invoke); ok {
				n.Kind, n.Type = "lookup", inv.Function
			}
		case spec.Resources[name] != nil:
			r := spec.Resources[name]
			n.Kind, n.Type = "resource", r.Type
			if r.Get != nil {
				n.Kind = "get"
			}
		}
		sg.Nodes = append(sg.Nodes, n)
	}
	for name := range spec.Outputs {
		sg.OutputDeps[name] = spec.OutputDeps(name)
	}
	return sg
}
