package render

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/plan"
)

// Graph is the dependency graph of a spec, as GraphDOT and GraphMermaid
// draw it: its nodes in dependency order, and an edge from each node to
// every node that depends on it. Made with GraphOf.
type Graph struct {
	Nodes []GraphNode
	// Edges go from a dependency to its dependent: From is applied first.
	Edges []GraphEdge
	// Planned is set when the nodes are coloured by a plan's actions.
	Planned bool
}

// GraphNode is one node: a config entry, variable, lookup, resource, get
// or output.
type GraphNode struct {
	// ID is the node's identifier in the drawing: "n" and a number, never
	// the name, which comes from the specs and could hold anything.
	ID   string
	Name string
	// Kind is config, variable, lookup, resource, get or output.
	Kind string
	// Type is the type token of a lookup, resource or get.
	Type string
	// Action is what the plan does to the node, when Planned is set and
	// the plan has a change for it; HasAction says whether it does.
	Action    plan.Action
	HasAction bool
	// Gone marks a node that only the plan names: a resource the specs no
	// longer declare, which the plan deletes or forgets.
	Gone bool
}

// GraphEdge is one dependency: To depends on From (node IDs).
type GraphEdge struct{ From, To string }

// SpecGraph is what GraphOf draws of the specs: the nodes in dependency
// order (Name, Kind and Type set), each node's dependencies, and each
// output's. The CLI fills it from a specs.Spec.
type SpecGraph struct {
	Nodes      []GraphNode
	Deps       map[string][]string
	OutputDeps map[string][]string
}

// GraphOf returns the graph of the specs; with p, its nodes carry the
// actions p plans for them, and the resources p deletes that the specs no
// longer declare are nodes too, without edges.
func GraphOf(sg SpecGraph, p *plan.Plan) *Graph {
	g := &Graph{Planned: p != nil}
	changes := map[string]*plan.Change{}
	if p != nil {
		for i := range p.Changes {
			changes[p.Changes[i].Addr] = &p.Changes[i]
		}
	}
	ids := map[string]string{} // by name: the node's ID
	index := map[string]int{}  // by name: the node's index in g.Nodes
	add := func(n GraphNode) string {
		n.ID = fmt.Sprintf("n%d", len(g.Nodes)+1)
		g.Nodes = append(g.Nodes, n)
		return n.ID
	}
	var names []string
	for _, n := range sg.Nodes {
		if c, ok := changes[n.Name]; ok && n.Kind != "config" && n.Kind != "variable" {
			n.Action, n.HasAction = c.Action, true
		}
		index[n.Name] = len(g.Nodes)
		ids[n.Name] = add(n)
		names = append(names, n.Name)
	}
	for _, name := range names {
		for _, d := range sg.Deps[name] {
			if from, ok := ids[d]; ok {
				g.Edges = append(g.Edges, GraphEdge{From: from, To: ids[name]})
			}
		}
	}
	if p != nil {
		for i := range p.Changes {
			c := &p.Changes[i]
			if c.Action != plan.Delete && c.Action != plan.Forget {
				continue
			}
			if i, declared := index[c.Addr]; declared {
				// A destroy plan deletes what the specs declare; another
				// deletes what they do not (or no longer as a resource).
				if p.Destroy {
					g.Nodes[i].Action, g.Nodes[i].HasAction = c.Action, true
					continue
				}
				if g.Nodes[i].Kind == "resource" {
					continue
				}
			}
			add(GraphNode{Name: c.Addr, Kind: string(c.Kind), Type: c.Type, Action: c.Action, HasAction: true, Gone: true})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sg.OutputDeps)) {
		id := add(GraphNode{Name: name, Kind: "output"})
		for _, d := range sg.OutputDeps[name] {
			if from, ok := ids[d]; ok {
				g.Edges = append(g.Edges, GraphEdge{From: from, To: id})
			}
		}
	}
	return g
}

// graphStyle is how one action is drawn.
type graphStyle struct {
	action plan.Action
	class  string // Mermaid class name
	fill   string
	stroke string
}

// graphStyles are the colours of the actions: the legend lists the first
// six always, and the others when a node has them.
var graphStyles = []graphStyle{
	{plan.Create, "create", "#c8e6c9", "#2e7d32"},   // green
	{plan.Update, "update", "#fff59d", "#f9a825"},   // yellow
	{plan.Replace, "replace", "#ffcc80", "#ef6c00"}, // orange
	{plan.Delete, "delete", "#ef9a9a", "#c62828"},   // red
	{plan.Read, "read", "#90caf9", "#1565c0"},       // blue
	{plan.NoOp, "noop", "#e0e0e0", "#757575"},       // grey
	{plan.Import, "import", "#ce93d8", "#6a1b9a"},   // purple
	{plan.Forget, "forget", "#bcaaa4", "#4e342e"},   // brown
	{plan.Refresh, "refresh", "#80deea", "#00838f"}, // cyan
}

func styleOf(a plan.Action) graphStyle {
	for _, s := range graphStyles {
		if s.action == a {
			return s
		}
	}
	return graphStyles[5]
}

// legend returns the styles the legend of g lists.
func (g *Graph) legend() []graphStyle {
	used := map[plan.Action]bool{}
	for _, n := range g.Nodes {
		if n.HasAction {
			used[n.Action] = true
		}
	}
	var out []graphStyle
	for i, s := range graphStyles {
		if i < 6 || used[s.action] {
			out = append(out, s)
		}
	}
	return out
}

// caption is the second line of a node's label: its type, or its kind.
func (n GraphNode) caption() string {
	c := n.Kind
	if n.Type != "" {
		c = n.Type
	}
	if n.Gone {
		c += ", not in the specs"
	}
	if n.HasAction {
		c += ": " + n.Action.String()
	}
	return c
}

// GraphDOT writes g in the DOT language of Graphviz. Node identifiers are
// generated (n1, n2, ...); names and types, which come from the specs,
// appear only in HTML-like labels with every character that means
// something there written as an entity, so that no name can end a
// string, add an attribute or a node. An edge A -> B means that B depends
// on A. With a plan, each node is filled with its action's colour, and a
// legend names the colours.
func GraphDOT(w io.Writer, g *Graph) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "digraph reconcile {")
	fmt.Fprintln(b, "  // An edge A -> B: B depends on A, and is applied after it.")
	fmt.Fprintln(b, "  rankdir=LR;")
	fmt.Fprintln(b, `  node [fontname="Helvetica", fontsize=11];`)
	for _, n := range g.Nodes {
		attrs := []string{"label=<" + dotHTML(n.Name) + `<BR/><FONT POINT-SIZE="9">` + dotHTML(n.caption()) + "</FONT>>", "shape=" + dotShape(n.Kind)}
		var style []string
		if n.Kind == "get" || n.Gone {
			style = append(style, "dashed")
		}
		if g.Planned && n.HasAction {
			s := styleOf(n.Action)
			style = append(style, "filled")
			attrs = append(attrs, fmt.Sprintf("fillcolor=%q", s.fill), fmt.Sprintf("color=%q", s.stroke))
		}
		if len(style) > 0 {
			attrs = append(attrs, fmt.Sprintf("style=%q", strings.Join(style, ",")))
		}
		fmt.Fprintf(b, "  %s [%s];\n", n.ID, strings.Join(attrs, ", "))
	}
	for _, e := range g.Edges {
		fmt.Fprintf(b, "  %s -> %s;\n", e.From, e.To)
	}
	if g.Planned {
		fmt.Fprintln(b, "  subgraph cluster_legend {")
		fmt.Fprintln(b, `    label="Legend: planned action";`)
		fmt.Fprintln(b, `    style="rounded";`)
		fmt.Fprintln(b, `    fontname="Helvetica";`)
		for _, s := range g.legend() {
			fmt.Fprintf(b, "    legend_%s [label=%q, shape=box, style=\"filled\", fillcolor=%q, color=%q];\n", s.class, s.action.String(), s.fill, s.stroke)
		}
		fmt.Fprintln(b, "  }")
	}
	fmt.Fprintln(b, "}")
	return b.Flush()
}

func dotShape(kind string) string {
	switch kind {
	case "resource", "get":
		return "box"
	case "lookup":
		return "ellipse"
	case "output":
		return "cds"
	case "config":
		return "note"
	}
	return "oval" // variable
}

// dotHTML escapes s for the text of a Graphviz HTML-like label: the
// characters of markup are entities, and so is every character that is
// not printable ASCII, so the label is plain ASCII whatever s holds.
func dotHTML(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&' || r == '<' || r == '>' || r == '"' || r == '\'' || r == '\\' || r < 0x20 || r > 0x7e:
			fmt.Fprintf(&b, "&#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// GraphMermaid writes g as a Mermaid flowchart, as GitHub renders one in
// Markdown (```mermaid). Node identifiers are generated (n1, n2, ...);
// names and types appear only inside quoted labels, in which every
// character but letters, digits, space and - _ . : / is written as a
// Mermaid entity code (#35; and the like), so that no name can end the
// label or start markup. An arrow A --> B means that B depends on A. With
// a plan, each node has its action's class, and a Legend subgraph names
// the colours.
func GraphMermaid(w io.Writer, g *Graph) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "flowchart LR")
	fmt.Fprintln(b, "  %% An arrow A --> B: B depends on A, and is applied after it.")
	for _, n := range g.Nodes {
		open, close := mermaidShape(n.Kind)
		fmt.Fprintf(b, "  %s%s\"%s<br/>%s\"%s\n", n.ID, open, mermaidText(n.Name), mermaidText(n.caption()), close)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(b, "  %s --> %s\n", e.From, e.To)
	}
	if g.Planned {
		fmt.Fprintln(b, "  subgraph legend [\"Legend: planned action\"]")
		for _, s := range g.legend() {
			fmt.Fprintf(b, "    legend_%s[\"%s\"]\n", s.class, s.action.String())
		}
		fmt.Fprintln(b, "  end")
		for _, s := range graphStyles {
			fmt.Fprintf(b, "  classDef %s fill:%s,stroke:%s,color:#000000\n", s.class, s.fill, s.stroke)
		}
		for _, s := range g.legend() {
			fmt.Fprintf(b, "  class legend_%s %s\n", s.class, s.class)
		}
		for _, n := range g.Nodes {
			if n.HasAction {
				fmt.Fprintf(b, "  class %s %s\n", n.ID, styleOf(n.Action).class)
			}
		}
	}
	return b.Flush()
}

func mermaidShape(kind string) (string, string) {
	switch kind {
	case "resource":
		return "[", "]"
	case "get":
		return "[[", "]]"
	case "lookup":
		return "([", "])"
	case "output":
		return "{{", "}}"
	case "config":
		return ">", "]"
	}
	return "(", ")" // variable
}

// mermaidText escapes s for a quoted Mermaid label: letters, digits,
// space and - _ . : / stay; every other character is an entity code
// (#NNN;), which Mermaid turns back into the character when it draws.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" -_.:/", r):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "#%d;", r)
		}
	}
	return b.String()
}
