package planner

import (
	"fmt"
	"maps"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/kind"
)

// selection is what Options.Targets and Options.Replace select, once
// checked against the specs and state.
type selection struct {
	// nodes are the nodes of the spec's graph a targeted plan walks: the
	// targets and what they depend on. Nil when the plan is not targeted.
	nodes map[string]bool
	// deletes are the managed resources of state a targeted plan may
	// delete: the targets the specs do not declare, or for a destroy the
	// targets and what depends on them in state. Nil when not targeted.
	deletes map[string]bool
	// replace are the resources to replace on request.
	replace map[string]bool
}

// targeted reports whether the plan is limited to targets.
func (s *selection) targeted() bool { return s.nodes != nil }

// walks reports whether the plan walks the node name.
func (s *selection) walks(name string) bool { return s.nodes == nil || s.nodes[name] }

// walksAll reports whether the plan walks every node of names.
func (s *selection) walksAll(names []string) bool {
	for _, n := range names {
		if !s.walks(n) {
			return false
		}
	}
	return true
}

// mayDelete reports whether the plan may delete the resource of state name.
func (s *selection) mayDelete(name string) bool { return s.deletes == nil || s.deletes[name] }

// selectNodes checks the names of Options.Targets and Options.Replace
// against the specs and state, and returns what they select; a name that
// selects nothing is an error diagnostic, with a suggestion.
func (p *planner) selectNodes() *selection {
	sel := &selection{replace: map[string]bool{}}
	managed := p.managedNames()
	if len(p.opts.Targets) > 0 {
		sel.nodes, sel.deletes = map[string]bool{}, map[string]bool{}
		var inSpecs []string
		for _, name := range p.opts.Targets {
			_, isConfig := p.spec.Config[name]
			_, isVariable := p.spec.Variables[name]
			_, isResource := p.spec.Resources[name]
			rec, inState := p.prior[name]
			switch {
			case isConfig:
				p.addDiag(diag.Errorf(diag.Pos{}, "--target %q names a config entry, which is not planned: target the resources that use it", name))
			case p.opts.Destroy && inState && rec.Head.Kind == kind.Resource:
				sel.deletes[name] = true
			case p.opts.Destroy:
				p.addDiag(diag.Errorf(diag.Pos{}, "--target %q: no managed resource of that name in state, so nothing of it to destroy%s", name, diag.DidYouMean(name, p.stateResources())))
			case isVariable || isResource:
				inSpecs = append(inSpecs, name)
			case inState && rec.Head.Kind == kind.Resource:
				sel.deletes[name] = true // no longer declared: its delete
			default:
				p.addDiag(diag.Errorf(diag.Pos{}, "--target %q: nothing of that name is declared in the specs or managed in state%s", name, diag.DidYouMean(name, p.targetNames())))
			}
		}
		sel.nodes = p.spec.Graph().Closure(inSpecs)
		if p.opts.Destroy {
			sel.deletes = p.dependentsInState(sel.deletes)
		}
	}
	for _, name := range p.opts.Replace {
		r, declared := p.spec.Resources[name]
		switch {
		case !declared || r.Get != nil:
			p.addDiag(diag.Errorf(diag.Pos{}, "--replace %q: no managed resource of that name is declared in the specs%s", name, diag.DidYouMean(name, managed)))
		case p.opts.Destroy:
			p.addDiag(diag.Errorf(diag.Pos{}, "--replace %q: a destroy plan replaces nothing; drop --replace or --destroy", name))
		case !sel.walks(name):
			p.addDiag(diag.Errorf(diag.Pos{}, "--replace %q: it is not among the --target resources and what they depend on; add --target %s", name, name))
		default:
			if rec, ok := p.prior[name]; !ok || rec.Head.Kind != kind.Resource || rec.Head.ID == "" {
				p.addDiag(diag.Diagnostic{Pos: r.Pos, Severity: diag.Warning,
					Summary: fmt.Sprintf("--replace %q: %s has no object yet, so there is nothing to replace: it is created", name, name)})
			}
			sel.replace[name] = true
		}
	}
	return sel
}

// dependentsInState returns names and every managed resource of state
// that depends on one of them, directly or not, as state records it: what
// a destroy of names must delete first.
func (p *planner) dependentsInState(names map[string]bool) map[string]bool {
	out := maps.Clone(names)
	for changed := true; changed; {
		changed = false
		for name, rec := range p.prior {
			if out[name] || rec.Head.Kind != kind.Resource {
				continue
			}
			for _, d := range rec.Head.Dependencies {
				if out[d] {
					out[name], changed = true, true
					break
				}
			}
		}
	}
	return out
}

// managedNames lists the managed resources the specs declare, sorted.
func (p *planner) managedNames() []string {
	var out []string
	for name, r := range p.spec.Resources {
		if r.Get == nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// stateResources lists the managed resources of state, sorted.
func (p *planner) stateResources() []string {
	var out []string
	for name, rec := range p.prior {
		if rec.Head.Kind == kind.Resource {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// targetNames lists every name a target may give: the variables and
// resources of the specs, and the managed resources of state.
func (p *planner) targetNames() []string {
	set := map[string]bool{}
	for name := range p.spec.Variables {
		set[name] = true
	}
	for name := range p.spec.Resources {
		set[name] = true
	}
	for _, name := range p.stateResources() {
		set[name] = true
	}
	return slices.Sorted(maps.Keys(set))
}
