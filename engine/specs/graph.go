package specs

import (
	"slices"
	"sort"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/diag"
)

// buildGraph returns the dependency graph of the config entries, variables
// and resources of s: each depends on what its expressions and options
// reference (a reference to itself is a cycle of one).
func buildGraph(s *Spec) *dag.Graph {
	deps := map[string][]string{}
	add := func(name string, exprs ...Expr) {
		set := map[string]bool{}
		for _, e := range exprs {
			if e == nil {
				continue
			}
			refs(e, func(r *Ref) {
				if r.Root != BuiltinRoot && r.Root != name {
					set[r.Root] = true
				}
				if r.Root == name {
					set[name] = true // a self reference is a cycle of one
				}
			})
		}
		deps[name] = []string{}
		for d := range set {
			deps[name] = append(deps[name], d)
		}
	}
	for name := range s.Config {
		add(name)
	}
	for name, v := range s.Variables {
		add(name, v.Expr)
	}
	for name, r := range s.Resources {
		add(name, r.exprs()...)
	}
	return dag.New(deps)
}

// exprs lists the expressions of r that may hold references: its inputs,
// get, and options; some may be nil.
func (r *Resource) exprs() []Expr {
	exprs := []Expr{r.Options.Protect, r.Options.DeleteBeforeReplace, r.Options.RetainOnDelete}
	if in := r.Inputs(); in != nil {
		exprs = append(exprs, in)
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
	if r.Options.Parent != nil {
		exprs = append(exprs, r.Options.Parent)
	}
	return exprs
}

// referenced returns the names that some expression of s refers to: the
// roots of its references, a config key of the project's namespace
// (${PROJECT:key}) as the key.
func (s *Spec) referenced() map[string]bool {
	set := map[string]bool{}
	note := func(e Expr) {
		if e == nil {
			return
		}
		refs(e, func(r *Ref) {
			root := r.Root
			if key, ok := strings.CutPrefix(root, s.Project+":"); ok {
				root = key
			}
			set[root] = true
		})
	}
	for _, v := range s.Variables {
		note(v.Expr)
	}
	for _, r := range s.Resources {
		for _, e := range r.exprs() {
			note(e)
		}
	}
	for _, o := range s.Outputs {
		note(o.Expr)
	}
	return set
}

// DeclaredAt is where s declares name, or the zero Pos.
func (s *Spec) DeclaredAt(name string) diag.Pos {
	if s == nil {
		return diag.Pos{}
	}
	if c, ok := s.Config[name]; ok {
		return c.Pos
	}
	if v, ok := s.Variables[name]; ok {
		return v.Pos
	}
	if r, ok := s.Resources[name]; ok {
		return r.Pos
	}
	return diag.Pos{}
}

// OutputsDeps returns the config entries, variables and resources that
// some output references (each output's OutputDeps, together).
func (s *Spec) OutputsDeps() []string {
	var out []string
	for name := range s.Outputs {
		out = append(out, s.OutputDeps(name)...)
	}
	return out
}

// OutputDeps returns the config entries, variables and resources the
// output name references, sorted; nil for an output s does not declare.
// Outputs are not nodes of the graph: nothing depends on them.
func (s *Spec) OutputDeps(name string) []string {
	o, ok := s.Outputs[name]
	if !ok || o.Expr == nil {
		return nil
	}
	set := map[string]bool{}
	refs(o.Expr, func(r *Ref) {
		if r.Root != BuiltinRoot {
			set[r.Root] = true
		}
	})
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// ResourceDeps lists, sorted, the resources name depends on: directly, or
// through variables. It is what a resource's record keeps as its
// dependencies.
func (s *Spec) ResourceDeps(name string) []string {
	g := s.Graph()
	seen := map[string]bool{}
	var out []string
	var visit func(n string)
	visit = func(n string) {
		for _, d := range g.Deps(n) {
			if seen[d] {
				continue
			}
			seen[d] = true
			if _, isResource := s.Resources[d]; isResource {
				out = append(out, d)
			} else {
				visit(d)
			}
		}
	}
	visit(name)
	sort.Strings(out)
	return out
}

// SameResourceDeps reports whether deps is ResourceDeps(name), without
// making that list when name refers to resources and config entries only,
// as most do.
func (s *Spec) SameResourceDeps(name string, deps []string) bool {
	g := s.Graph()
	direct := g.Deps(name)
	for _, d := range direct {
		_, isResource := s.Resources[d]
		if _, isConfig := s.Config[d]; !isResource && (!isConfig || len(g.Deps(d)) > 0) {
			return slices.Equal(deps, s.ResourceDeps(name)) // through variables
		}
	}
	i := 0
	for _, d := range direct {
		if _, isResource := s.Resources[d]; isResource {
			if i >= len(deps) || deps[i] != d {
				return false
			}
			i++
		}
	}
	return i == len(deps)
}
