package eval

import (
	"context"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
)

// CheckInputs runs the checks a driver offers of the inputs its API would
// refuse, ic (resources.InputChecker) and then, when ic found nothing, pc
// (resources.PlanChecker, which may read the cloud); either may be nil.
// It returns what they find as error diagnostics at the inputs' places in
// the specs.
//
// vals are r's inputs as evaluated (value.Unknown where not known,
// value.Secret around secrets, schema defaults added), before Normalize;
// inputs is r's inputs expression, for positions. The checks are given
// the known and non-secret parts alone (see resources.InputChecker), and
// pc prior, the inputs state records (nil for none), the same way. A
// PlanChecker's failed read is one diagnostic at the resource.
func CheckInputs(ctx context.Context, ic resources.InputChecker, pc resources.PlanChecker, r *specs.Resource, inputs specs.Expr, vals, prior map[string]any) diag.Diagnostics {
	if ic == nil && pc == nil {
		return nil
	}
	want := Checkable(vals)
	var ds diag.Diagnostics
	report := func(err error, what string) {
		attrs, rest := resources.AttrErrors(err)
		for _, ae := range attrs {
			ds = append(ds, specs.CheckDiagnostic(r, inputs, ae))
		}
		if rest != nil {
			ds = append(ds, diag.Errorf(r.Pos, "%s %q: %s: %v", r.Type, r.Name, what, rest))
		}
	}
	if ic != nil {
		report(ic.CheckInputs(want), "check the inputs")
	}
	if pc != nil && len(ds) == 0 {
		var was resources.Attrs
		if prior != nil {
			was = Checkable(prior)
		}
		report(pc.CheckPlan(ctx, want, was), "check what the API would refuse")
	}
	return ds
}

// Checkable returns the parts of vals a driver's checks are given: the
// known, non-secret JSON values, with value.Unknown, value.Secret and
// sealed secrets left out of maps and nil in lists (so that indexes stay
// those of the specs).
func Checkable(vals map[string]any) resources.Attrs {
	out := make(resources.Attrs, len(vals))
	for k, v := range vals {
		if c, ok := checkable(v); ok {
			out[k] = c
		}
	}
	return out
}

// checkable returns v as Checkable keeps it, and false when v is left out.
func checkable(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, int64, float64:
		return x, true
	case int:
		return int64(x), true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i], _ = checkable(e)
		}
		return out, true
	case map[string]any:
		if value.IsSealed(x) {
			return nil, false
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if c, ok := checkable(e); ok {
				out[k] = c
			}
		}
		return out, true
	}
	return nil, false // value.Unknown, value.Secret, and any other
}
