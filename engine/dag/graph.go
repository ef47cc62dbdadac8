package dag

import (
	"container/heap"
	"slices"
	"sort"
)

// Graph is a dependency graph of named nodes: each node lists the nodes it
// depends on. It is built once and read only after.
type Graph struct {
	deps       map[string][]string // by node: its dependencies, sorted, unique
	dependents map[string][]string // by node: the nodes that depend on it, sorted
	order      []string            // topological: dependencies first, ties by name
}

// New returns the graph of deps: each key a node, each value the nodes it
// depends on. A dependency that is not itself a key keeps its dependent out
// of Order, as a cycle does.
func New(deps map[string][]string) *Graph {
	g := &Graph{deps: make(map[string][]string, len(deps)), dependents: map[string][]string{}}
	for name, ds := range deps {
		d := slices.Clone(ds)
		sort.Strings(d)
		g.deps[name] = slices.Compact(d)
	}
	for name, ds := range g.deps {
		for _, d := range ds {
			g.dependents[d] = append(g.dependents[d], name)
		}
	}
	for _, ds := range g.dependents {
		sort.Strings(ds)
	}
	g.order = g.topo()
	return g
}

// Order returns the nodes dependencies first, ties broken by name; nodes
// on a cycle, or depending on something that is not a node, are left out.
func (g *Graph) Order() []string { return g.order }

// Deps returns the dependencies of name, sorted.
func (g *Graph) Deps(name string) []string { return g.deps[name] }

// Dependents returns the nodes that depend on name directly, sorted.
func (g *Graph) Dependents(name string) []string { return g.dependents[name] }

// Has reports whether name is a node.
func (g *Graph) Has(name string) bool {
	_, ok := g.deps[name]
	return ok
}

// DepsMap returns every node's dependencies, for Walk.
func (g *Graph) DepsMap() map[string][]string { return g.deps }

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
func (g *Graph) topo() []string {
	indeg := make(map[string]int, len(g.deps))
	h := &nameHeap{}
	for name, deps := range g.deps {
		indeg[name] = len(deps)
		if len(deps) == 0 {
			*h = append(*h, name)
		}
	}
	heap.Init(h)
	order := make([]string, 0, len(g.deps))
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

// Cycles returns every strongly connected component that is a cycle (a
// node that depends on itself is one of one), each rotated to start at
// its smallest name and listed in edge order.
func (g *Graph) Cycles() [][]string {
	if len(g.order) == len(g.deps) {
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
		for _, w := range g.deps[v] {
			if _, ok := g.deps[w]; !ok {
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
			self := len(comp) == 1 && slices.Contains(g.deps[v], v)
			if len(comp) > 1 || self {
				out = append(out, g.orderCycle(comp))
			}
		}
	}
	names := make([]string, 0, len(g.deps))
	for n := range g.deps {
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
func (g *Graph) orderCycle(comp []string) []string {
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
		for _, d := range g.deps[cur] {
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

// Closure returns the nodes of names and every node they depend on,
// directly or not; names that are not nodes are left out.
func (g *Graph) Closure(names []string) map[string]bool {
	out := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		if out[n] || !g.Has(n) {
			return
		}
		out[n] = true
		for _, d := range g.deps[n] {
			visit(d)
		}
	}
	for _, n := range names {
		visit(n)
	}
	return out
}
