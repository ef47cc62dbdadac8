package specs

import (
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/resources"
)

// checkInputs gives the drivers' checks (LoadOptions.Checkers) the inputs
// of each resource of their type as far as the specs alone give them,
// before literals are folded, so that what they find is reported where it
// is written. What only plan knows is checked there (eval.CheckInputs).
func (l *loader) checkInputs() {
	if len(l.opts.Checkers) == 0 {
		return
	}
	for _, name := range sortedKeys(l.spec.Resources) {
		r := l.spec.Resources[name]
		c, ok := l.opts.Checkers[r.Type]
		if !ok || r.Properties == nil || l.broken[name] {
			continue
		}
		want, _ := l.offlineValue(r.Properties)
		m, _ := want.(map[string]any)
		attrs, rest := resources.AttrErrors(c.CheckInputs(m))
		for _, ae := range attrs {
			l.diags = append(l.diags, CheckDiagnostic(r, r.Properties, ae))
		}
		if rest != nil {
			l.errorf(r.Pos, "%s %q: %v", r.Type, r.Name, rest)
		}
	}
}

// offlineValue returns what e is as far as the specs alone give it, as a
// driver's check takes it (see resources.InputChecker): literals, and
// strings made of literals, config values and the project and stack
// names; what is not known so is missing from a map and nil in a list.
// It reports false when e is not known at all.
func (l *loader) offlineValue(e Expr) (any, bool) {
	switch x := e.(type) {
	case *Lit:
		return x.Value, true
	case *List:
		out := make([]any, len(x.Items))
		for i, it := range x.Items {
			out[i], _ = l.offlineValue(it)
		}
		return out, true
	case *Object:
		out := make(map[string]any, len(x.Entries))
		for _, en := range x.Entries {
			if v, ok := l.offlineValue(en.Value); ok {
				out[en.Key] = v
			}
		}
		return out, true
	}
	return l.offlineString(e)
}

// CheckDiagnostic is the error diagnostic of what a driver's check of r's
// inputs found (ae), at the input's place in inputs, r's inputs
// expression.
func CheckDiagnostic(r *Resource, inputs Expr, ae *resources.AttrError) diag.Diagnostic {
	return diag.Errorf(InputPos(inputs, ae.Path), "%s %q: field %q: %v", r.Type, r.Name, displayPath(ae.Path), ae.Err)
}
