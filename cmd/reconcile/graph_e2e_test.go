package main

import (
	"fmt"
	"html"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Hostile names for the graph: each would break DOT or Mermaid written
// naively (a quote, a backslash at the end, markup, an edge, a comment,
// Mermaid's keyword end, entity syntax).
const (
	hostileConfig = `q"uo\te ]; n1 -> n2 [color=red] end\`
	hostileRef    = `a<b>&amp;c`
	hostileVar    = `x-->y;#1%%`
	hostileOutput = `o"ut{}\`
)

// graphSpec is a spec with lookups, three policies and hostile names; the
// edges it has are graphEdges.
func graphSpec(keep, fresh, rep string) string {
	s := spec(policySpec("keep", keep, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role1), ""),
		policySpec("fresh", fresh, "", ""), policySpec("rep", rep, "", ""), policySpec("same", rep+"-same", "", ""))
	s = strings.Replace(s, "variables:\n", "variables:\n  '"+hostileVar+"':\n    fn::join: [\"\", ['${"+hostileRef+"}', '${end}']]\n", 1)
	s = strings.Replace(s, "outputs:\n", "outputs:\n  '"+hostileOutput+"': ${"+hostileVar+"}\n", 1)
	return `config:
  '` + hostileConfig + `':
    type: string
    default: unused
  '` + hostileRef + `':
    type: string
    default: hi
  end:
    type: string
    default: x
` + s
}

// graphEdges are the edges of graphSpec, dependency -> dependent.
var graphEdges = []string{
	"me -> keep", "me -> fresh", "me -> rep", "me -> same",
	"svcPolicy -> policyEtag", "me -> orgPrincipal",
	hostileRef + " -> " + hostileVar, "end -> " + hostileVar, hostileVar + " -> " + hostileOutput,
}

// graphStage applies a first version of the specs, then writes graphSpec
// and saves its plan: keep updated, fresh created, rep replaced, same
// unchanged, gone deleted, the lookups read.
func graphStage(t *testing.T, w *ws) {
	t.Helper()
	keep, fresh, rep, gone := rid(t, "keep"), rid(t, "fresh"), rid(t, "rep"), rid(t, "gone")
	w.write("main.yaml", spec(policySpec("keep", keep, "", ""), policySpec("rep", rep+"-old", "", ""),
		policySpec("same", rep+"-same", "", ""), policySpec("gone", gone, "", "")))
	w.must(0, "apply", "--auto-approve")
	w.write("main.yaml", graphSpec(keep, fresh, rep))
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")
}

// wantActions are the actions the plan of graphStage takes, by node; the
// nodes it does not name are uncoloured.
var wantActions = map[string]string{
	"keep": "update", "fresh": "create", "rep": "replace", "same": "no-op", "gone": "delete",
	"me": "read", "svcPolicy": "read",
}

// Colours of the actions, as the help text of graph names them.
var actionFill = map[string]string{
	"create": "#c8e6c9", "update": "#fff59d", "replace": "#ffcc80", "delete": "#ef9a9a", "read": "#90caf9", "no-op": "#e0e0e0",
}

func TestE2EGraphDOT(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	graphStage(t, w)

	mark := e.mark()
	plain := w.must(0, "graph")
	planned := w.must(0, "graph", "p.plan")
	if calls := e.callsSince(mark, ""); len(calls) != 0 {
		t.Errorf("graph called the cloud: %v", calls)
	}
	for _, r := range []result{plain, planned} {
		if r.stderr != "" {
			t.Errorf("graph printed on stderr:\n%s", r)
		}
	}

	g, err := parseDOT(plain.stdout)
	if err != nil {
		t.Fatalf("the DOT of graph does not parse: %v\n%s", err, plain.stdout)
	}
	checkGraph(t, g, false)
	if strings.Contains(plain.stdout, "fillcolor") || strings.Contains(plain.stdout, "Legend") {
		t.Errorf("a graph without a plan is coloured:\n%s", plain.stdout)
	}

	g, err = parseDOT(planned.stdout)
	if err != nil {
		t.Fatalf("the DOT of graph PLANFILE does not parse: %v\n%s", err, planned.stdout)
	}
	checkGraph(t, g, true)
	for name, action := range wantActions {
		n := g.byName[name]
		if n == nil {
			continue // reported by checkGraph
		}
		if n.attrs["fillcolor"] != actionFill[action] || !strings.Contains(n.attrs["style"], "filled") || !strings.HasSuffix(n.caption, ": "+action) {
			t.Errorf("node %s: attrs %v caption %q, want filled with %s (%s)", name, n.attrs, n.caption, actionFill[action], action)
		}
	}
	for _, name := range []string{hostileConfig, hostileVar, hostileOutput, "policyEtag"} {
		if n := g.byName[name]; n != nil && n.attrs["fillcolor"] != "" {
			t.Errorf("node %q has no change but is coloured: %v", name, n.attrs)
		}
	}
	if !strings.Contains(g.byName["gone"].attrs["style"], "dashed") {
		t.Errorf("gone, deleted and not in the specs, is not dashed: %v", g.byName["gone"].attrs)
	}
	for action, fill := range actionFill {
		n := g.legend[action]
		if n == nil || n.attrs["fillcolor"] != fill {
			t.Errorf("the legend has no %s in %s: %v", action, fill, g.legend)
		}
	}

	// Graphviz itself, where it is installed, draws it.
	if dot, err := exec.LookPath("dot"); err == nil {
		for _, r := range []result{plain, planned} {
			cmd := exec.Command(dot, "-Tsvg")
			cmd.Stdin = strings.NewReader(r.stdout)
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "<svg") {
				t.Errorf("dot -Tsvg: %v\n%.2000s", err, out)
			}
		}
	}

	// Specs that changed since the plan: drawn as they are, with a note.
	// A secret config value without a default is not asked for.
	w.write("extra.yaml", "config:\n  apiKey:\n    type: string\n    secret: true\n"+
		"resources:\n"+policySpec("later", rid(t, "later"), "", ""))
	r := w.must(0, "graph", "p.plan")
	wantStderr(t, r, "changed since the plan was made")
	if g, err := parseDOT(r.stdout); err != nil {
		t.Errorf("graph of changed specs: %v", err)
	} else if n := g.byName["later"]; n == nil || n.attrs["fillcolor"] != "" {
		t.Errorf("graph of changed specs: later = %+v, want it drawn uncoloured", n)
	}
	w.must(0, "graph")

	// Errors say what is wrong and what to do.
	wantStderr(t, w.must(1, "graph", "--format", "svg"), `--format must be dot or mermaid, got "svg"`)
	wantStderr(t, w.must(1, "graph", "-f", ".", "p.plan"), "either -f PATH or a plan file")
	wantStderr(t, w.must(1, "graph", "--output", "json"), "--format dot|mermaid")
}

func TestE2EGraphMermaid(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	graphStage(t, w)

	for _, planned := range []bool{false, true} {
		args := []string{"graph", "--format", "mermaid"}
		if planned {
			args = append(args, "p.plan")
		}
		r := w.must(0, args...)
		g, err := parseMermaid(r.stdout)
		if err != nil {
			t.Fatalf("%s: not a flowchart GitHub draws: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
		checkGraph(t, g, planned)
		if !planned {
			if strings.Contains(r.stdout, "classDef") || strings.Contains(r.stdout, "legend") {
				t.Errorf("a graph without a plan is coloured:\n%s", r.stdout)
			}
			continue
		}
		for name, action := range wantActions {
			if n := g.byName[name]; n != nil && (n.attrs["class"] != strings.ReplaceAll(action, "-", "") || !strings.HasSuffix(n.caption, ": "+action)) {
				t.Errorf("node %s: class %q caption %q, want %s", name, n.attrs["class"], n.caption, action)
			}
		}
		for action, fill := range actionFill {
			class := strings.ReplaceAll(action, "-", "")
			if !strings.Contains(r.stdout, "classDef "+class+" fill:"+fill+",") {
				t.Errorf("no classDef %s with fill %s:\n%s", class, fill, r.stdout)
			}
			if n := g.legend[action]; n == nil || n.attrs["class"] != class {
				t.Errorf("the legend has no %s of class %s", action, class)
			}
		}
	}
}

// drawnNode is a node as a drawing shows it.
type drawnNode struct {
	id, name, caption string
	attrs             map[string]string
}

// drawnGraph is what a drawing holds: its nodes, by name, its legend, by
// action, and its edges, "from -> to" by names.
type drawnGraph struct {
	byName map[string]*drawnNode
	legend map[string]*drawnNode
	edges  []string
}

// checkGraph checks the nodes and edges of a drawing of graphStage's
// specs (and, if planned, plan).
func checkGraph(t *testing.T, g *drawnGraph, planned bool) {
	t.Helper()
	names := []string{hostileConfig, hostileRef, "end", hostileVar, "me", "svcPolicy", "keep", "fresh", "rep", "same", "policyEtag", "orgPrincipal", hostileOutput}
	if planned {
		names = append(names, "gone")
	}
	for _, n := range names {
		if g.byName[n] == nil {
			t.Errorf("no node named %q; nodes: %v", n, slices.Sorted(func(yield func(string) bool) {
				for k := range g.byName {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
	if len(g.byName) != len(names) {
		t.Errorf("%d nodes, want %d", len(g.byName), len(names))
	}
	got := slices.Sorted(slices.Values(g.edges))
	want := slices.Sorted(slices.Values(graphEdges))
	if !slices.Equal(got, want) {
		t.Errorf("edges:\n got %q\nwant %q", got, want)
	}
	if planned != (len(g.legend) > 0) {
		t.Errorf("planned %v, legend %v", planned, g.legend)
	}
}

// dotToken is one token of the DOT language.
type dotToken struct {
	kind string // id, string, html, or the punctuation itself
	text string
}

// lexDOT splits src into tokens as Graphviz's scanner does: IDs, numerals,
// quoted strings (in which only \" is an escape), HTML strings (<...>,
// nested), punctuation and -> ; comments are dropped.
func lexDOT(src string) ([]dotToken, error) {
	var out []dotToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case strings.HasPrefix(src[i:], "->"):
			out = append(out, dotToken{"->", "->"})
			i += 2
		case strings.ContainsRune("{}[];,=", rune(c)):
			out = append(out, dotToken{string(c), string(c)})
			i++
		case c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' && j+1 < len(src) && src[j+1] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				b.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, dotToken{"string", b.String()})
			i = j + 1
		case c == '<':
			depth, j := 0, i
			for ; j < len(src); j++ {
				if src[j] == '<' {
					depth++
				} else if src[j] == '>' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated HTML string at %d", i)
			}
			out = append(out, dotToken{"html", src[i+1 : j]})
			i = j + 1
		case c == '_' || c == '-' || c == '.' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])) || (j == i && src[j] == '-')) {
				j++
			}
			out = append(out, dotToken{"id", src[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q at %d", c, i)
		}
	}
	return out, nil
}

// parseDOT parses the digraph reconcile's graph writes: graph attribute
// assignments, node defaults, node statements with attributes, edges and
// one subgraph, with every node used in an edge declared first.
func parseDOT(src string) (*drawnGraph, error) {
	toks, err := lexDOT(src)
	if err != nil {
		return nil, err
	}
	pos := 0
	peek := func() dotToken {
		if pos < len(toks) {
			return toks[pos]
		}
		return dotToken{"eof", ""}
	}
	next := func() dotToken { t := peek(); pos++; return t }
	expect := func(kind string) (dotToken, error) {
		t := next()
		if t.kind != kind {
			return t, fmt.Errorf("token %d: want %s, got %s %q", pos-1, kind, t.kind, t.text)
		}
		return t, nil
	}
	isID := func(t dotToken) bool { return t.kind == "id" || t.kind == "string" || t.kind == "html" }
	attrList := func() (map[string]string, error) {
		attrs := map[string]string{}
		if peek().kind != "[" {
			return attrs, nil
		}
		next()
		for peek().kind != "]" {
			k := next()
			if !isID(k) {
				return nil, fmt.Errorf("attribute name: got %s %q", k.kind, k.text)
			}
			if _, err := expect("="); err != nil {
				return nil, err
			}
			v := next()
			if !isID(v) {
				return nil, fmt.Errorf("attribute %s: got %s %q", k.text, v.kind, v.text)
			}
			attrs[k.text] = v.text
			if peek().kind == "," || peek().kind == ";" {
				next()
			}
		}
		next()
		return attrs, nil
	}
	g := &drawnGraph{byName: map[string]*drawnNode{}, legend: map[string]*drawnNode{}}
	nodes := map[string]*drawnNode{}
	if t := next(); t.text != "digraph" {
		return nil, fmt.Errorf("want digraph, got %q", t.text)
	}
	if t := next(); !isID(t) {
		return nil, fmt.Errorf("want the graph's name, got %q", t.text)
	}
	var stmts func(inLegend bool) error
	stmts = func(inLegend bool) error {
		if _, err := expect("{"); err != nil {
			return err
		}
		for peek().kind != "}" {
			t := next()
			switch {
			case t.kind == "id" && t.text == "subgraph":
				if !isID(next()) {
					return fmt.Errorf("subgraph without a name")
				}
				if err := stmts(true); err != nil {
					return err
				}
			case t.kind == "id" && (t.text == "node" || t.text == "edge" || t.text == "graph"):
				if _, err := attrList(); err != nil {
					return err
				}
			case isID(t) && peek().kind == "=":
				next()
				if !isID(next()) {
					return fmt.Errorf("%s = what?", t.text)
				}
			case isID(t) && peek().kind == "->":
				next()
				to := next()
				if !isID(to) {
					return fmt.Errorf("edge from %s to %s %q", t.text, to.kind, to.text)
				}
				if _, err := attrList(); err != nil {
					return err
				}
				from, dst := nodes[t.text], nodes[to.text]
				if from == nil || dst == nil {
					return fmt.Errorf("edge %s -> %s between undeclared nodes", t.text, to.text)
				}
				g.edges = append(g.edges, from.name+" -> "+dst.name)
			case isID(t):
				attrs, err := attrList()
				if err != nil {
					return err
				}
				if nodes[t.text] != nil {
					return fmt.Errorf("node %s declared twice", t.text)
				}
				n := &drawnNode{id: t.text, attrs: attrs}
				n.name, n.caption = splitDOTLabel(attrs["label"])
				nodes[t.text] = n
				if inLegend {
					g.legend[n.name] = n
				} else {
					if g.byName[n.name] != nil {
						return fmt.Errorf("two nodes named %q", n.name)
					}
					g.byName[n.name] = n
				}
			default:
				return fmt.Errorf("unexpected %s %q", t.kind, t.text)
			}
			if peek().kind == ";" {
				next()
			}
		}
		next()
		return nil
	}
	if err := stmts(false); err != nil {
		return nil, err
	}
	if peek().kind != "eof" {
		return nil, fmt.Errorf("text after the graph: %q", peek().text)
	}
	return g, nil
}

// splitDOTLabel returns the name and the caption of a node's HTML label
// (name<BR/><FONT ...>caption</FONT>), markup dropped and entities decoded.
func splitDOTLabel(label string) (string, string) {
	name, caption, _ := strings.Cut(label, "<BR/>")
	caption = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(caption, "")
	return html.UnescapeString(name), html.UnescapeString(caption)
}

// Lines of a Mermaid flowchart as reconcile writes it: every id is n and a
// number or legend_ and a word, every label is quoted and holds only
// letters, digits, space, - _ . : /, entity codes and one <br/>.
var (
	mermaidLabel  = `"((?:[A-Za-z0-9 _.:/-]|#[0-9]+;)*)(?:<br/>((?:[A-Za-z0-9 _.:/-]|#[0-9]+;)*))?"`
	mermaidNode   = regexp.MustCompile(`^\s*(n[0-9]+|legend_[a-z]+)(\[|\[\[|\(\[|\{\{|>|\()` + mermaidLabel + `(\]|\]\]|\]\)|\}\}|\))$`)
	mermaidEdge   = regexp.MustCompile(`^\s*(n[0-9]+) --> (n[0-9]+)$`)
	mermaidClass  = regexp.MustCompile(`^\s*class (n[0-9]+|legend_[a-z]+) ([a-z]+)$`)
	mermaidDef    = regexp.MustCompile(`^\s*classDef [a-z]+ fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},color:#[0-9a-f]{6}$`)
	mermaidEntity = regexp.MustCompile(`#([0-9]+);`)
)

// parseMermaid checks every line of src against the forms above and
// returns the graph it draws.
func parseMermaid(src string) (*drawnGraph, error) {
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "flowchart LR" {
		return nil, fmt.Errorf("the first line is not 'flowchart LR'")
	}
	g := &drawnGraph{byName: map[string]*drawnNode{}, legend: map[string]*drawnNode{}}
	nodes := map[string]*drawnNode{}
	pairs := map[string]string{"[": "]", "[[": "]]", "([": "])", "{{": "}}", ">": "]", "(": ")"}
	decode := func(s string) string {
		return mermaidEntity.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.Atoi(mermaidEntity.FindStringSubmatch(m)[1])
			return string(rune(n))
		})
	}
	inLegend := false
	for i, line := range lines[1:] {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "%%"):
		case line == `  subgraph legend ["Legend: planned action"]`:
			inLegend = true
		case line == "  end":
			inLegend = false
		case mermaidNode.MatchString(line):
			m := mermaidNode.FindStringSubmatch(line)
			if pairs[m[2]] != m[5] {
				return nil, fmt.Errorf("line %d: shape %s closed by %s", i+2, m[2], m[5])
			}
			if nodes[m[1]] != nil {
				return nil, fmt.Errorf("line %d: node %s twice", i+2, m[1])
			}
			n := &drawnNode{id: m[1], name: decode(m[3]), caption: decode(m[4]), attrs: map[string]string{}}
			nodes[m[1]] = n
			if inLegend {
				g.legend[n.name] = n
			} else {
				g.byName[n.name] = n
			}
		case mermaidEdge.MatchString(line):
			m := mermaidEdge.FindStringSubmatch(line)
			if nodes[m[1]] == nil || nodes[m[2]] == nil {
				return nil, fmt.Errorf("line %d: edge between undeclared nodes", i+2)
			}
			g.edges = append(g.edges, nodes[m[1]].name+" -> "+nodes[m[2]].name)
		case mermaidDef.MatchString(line):
		case mermaidClass.MatchString(line):
			m := mermaidClass.FindStringSubmatch(line)
			if nodes[m[1]] == nil {
				return nil, fmt.Errorf("line %d: class of an undeclared node", i+2)
			}
			nodes[m[1]].attrs["class"] = m[2]
		default:
			return nil, fmt.Errorf("line %d is none of the forms reconcile writes: %q", i+2, line)
		}
	}
	return g, nil
}
