package engine

import (
	"container/heap"
	"reconcile/engine/diag"
	"sort"
)

// node kinds in the graph
const (
	nodeConfig = iota
	nodeVariable
	nodeResource
)

type gnode struct {
	name string
	kind int
	pos  diag.Pos
	deps []string // sorted, unique
}

// graph is the dependency graph of config, variables and resources.
type graph struct {
	nodes      map[string]*gnode
	dependents map[string][]string
	order      []string // topological: dependencies first, ties by name
}

func buildGraph(s *Spec) *graph {
	g := &graph{nodes: map[string]*gnode{}, dependents: map[string][]string{}}
	add := func(name string, kind int, pos diag.Pos, exprs ...Expr) *gnode {
		set := map[string]bool{}
		for _, e := range exprs {
			if e == nil {
				continue
			}
			refs(e, func(r *Ref) {
				if r.Root != builtinRoot && r.Root != name {
					set[r.Root] = true
				}
				if r.Root == name {
					set[name] = true // a self reference is a cycle of one
				}
			})
		}
		n := &gnode{name: name, kind: kind, pos: pos}
		for d := range set {
			n.deps = append(n.deps, d)
		}
		sort.Strings(n.deps)
		g.nodes[name] = n
		return n
	}
	for name, c := range s.Config {
		add(name, nodeConfig, c.Pos)
	}
	for name, v := range s.Variables {
		add(name, nodeVariable, v.Pos, v.Expr)
	}
	for name, r := range s.Resources {
		exprs := []Expr{r.Options.Protect, r.Options.DeleteBeforeReplace, r.Options.RetainOnDelete}
		if r.Properties != nil {
			exprs = append(exprs, r.Properties)
		}
		if r.Get != nil {
			exprs = append(exprs, r.Get.ID)
			if r.Get.State != nil {
				exprs = append(exprs, r.Get.State)
			}
		}
		for _, d := range r.Options.DependsOn {
			exprs = append(exprs, d)
		}
		add(name, nodeResource, r.Pos, exprs...)
	}
	for name, n := range g.nodes {
		for _, d := range n.deps {
			g.dependents[d] = append(g.dependents[d], name)
		}
	}
	for _, ds := range g.dependents {
		sort.Strings(ds)
	}
	g.order = g.topo()
	return g
}

type nameHeap []string

func (h nameHeap) Len() int           { return len(h) }
func (h nameHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h nameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nameHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *nameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topo orders the nodes dependencies first, breaking ties by name. Nodes on
// a cycle are left out.
func (g *graph) topo() []string {
	indeg := make(map[string]int, len(g.nodes))
	h := &nameHeap{}
	for name, n := range g.nodes {
		indeg[name] = len(n.deps)
		if len(n.deps) == 0 {
			*h = append(*h, name)
		}
	}
	heap.Init(h)
	order := make([]string, 0, len(g.nodes))
	for h.Len() > 0 {
		name := heap.Pop(h).(string)
		order = append(order, name)
		for _, d := range g.dependents[name] {
			indeg[d]--
			if indeg[d] == 0 {
				heap.Push(h, d)
			}
		}
	}
	return order
}

// cycles returns every strongly connected component that is a cycle, each
// rotated to start at its smallest name and listed in edge order.
func (g *graph) cycles() [][]string {
	if len(g.order) == len(g.nodes) {
		return nil
	}
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g.nodes[v].deps {
			if _, ok := g.nodes[w]; !ok {
				continue
			}
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			self := len(comp) == 1 && contains(g.nodes[v].deps, v)
			if len(comp) > 1 || self {
				out = append(out, g.orderCycle(comp))
			}
		}
	}
	names := make([]string, 0, len(g.nodes))
	for n := range g.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, seen := index[n]; !seen {
			strong(n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// orderCycle lists a component's members along dependency edges, starting at
// the smallest name, so that the message reads a -> b -> c -> a.
func (g *graph) orderCycle(comp []string) []string {
	in := map[string]bool{}
	for _, c := range comp {
		in[c] = true
	}
	sort.Strings(comp)
	start := comp[0]
	out := []string{start}
	seen := map[string]bool{start: true}
	cur := start
	for len(out) < len(comp) {
		nextName := ""
		for _, d := range g.nodes[cur].deps {
			if in[d] && !seen[d] {
				nextName = d
				break
			}
		}
		if nextName == "" {
			break
		}
		out = append(out, nextName)
		seen[nextName] = true
		cur = nextName
	}
	for _, c := range comp {
		if !seen[c] {
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
