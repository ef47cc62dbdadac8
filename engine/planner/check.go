package planner

import (
	"context"

	"github.com/reconcile-dev/reconcile/engine/eval"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// checkInputs runs the checks r's driver offers of what its API would
// refuse (eval.CheckInputs), given its inputs as evaluated (before
// Normalize) and, when state records an object of r (prior, hasPrior),
// the inputs last applied. It reports what they find, and whether they
// found anything. A problem found here would make the apply fail at the
// API: the plan fails instead, at the input's place in the specs.
func (p *planner) checkInputs(ctx context.Context, r *specs.Resource, inputs specs.Expr, given map[string]any, prior state.Record, hasPrior bool) bool {
	d, ok := p.reg.Drivers[r.Type]
	if !ok {
		return false
	}
	var was map[string]any
	if hasPrior && prior.ID != "" && prior.Tainted == "" {
		was = prior.Inputs
	}
	ic, _ := d.(resources.InputChecker)
	pc, _ := d.(resources.PlanChecker)
	ds := eval.CheckInputs(resources.WithNode(ctx, r.Name), ic, pc, r, inputs, given, was)
	for _, d := range ds {
		p.addDiag(d)
	}
	return len(ds) > 0
}
