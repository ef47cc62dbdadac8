package eval

import (
	"context"
	"errors"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
)

// Offline evaluates what the specs alone give, with no cloud and no state,
// and reports the problems found: every variable, whether anything uses it
// or not (as plan evaluates each, as Pulumi evaluates the whole program),
// every output, and the inputs of every resource and the id of every get.
// What only the cloud can give is Unknown: a resource's or get's fields
// (its URN is known), a lookup's results. So the errors found are those
// plan would report from the same specs and config: a function given what
// it cannot take (fn::select out of range, fn::fromBase64 of no base64),
// a file function's file that is missing or outside the project, a value
// over the size limit. The values are not checked against the types'
// schemas; plan does that. A node whose expression fails counts as Unknown
// to those that depend on it, which so report nothing more.
//
// The inputs of each resource whose type has a check in checkers (by type
// token; nil for none) are given to it, as far as they are known offline,
// and what it finds is reported at its place: the refusals of the
// vendor's API that the specs alone show (CheckInputs).
func Offline(s *specs.Spec, checkers map[string]resources.InputChecker) diag.Diagnostics {
	env := make(map[string]any, len(s.Config)+len(s.Variables))
	for name, v := range s.Values {
		env[name] = v
	}
	var ds diag.Diagnostics
	report := func(err error, fallback diag.Pos) {
		var ee *Error
		if errors.As(err, &ee) {
			ds = append(ds, diag.Errorf(ee.Pos, "%s", ee.Msg))
			return
		}
		ds = append(ds, diag.Errorf(fallback, "%v", err))
	}
	lookup := EnvFunc(func(name string) (any, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		if _, ok := s.Resources[name]; ok {
			return value.Unknown{}, true
		}
		return nil, false
	})
	newEv := func() *Evaluator { return &Evaluator{Spec: s, Env: lookup} } // Invoke nil: lookups are Unknown
	for _, name := range s.Graph().Order() {
		if v, ok := s.Variables[name]; ok {
			val, err := newEv().Eval(v.Expr)
			if err != nil {
				report(err, v.Pos)
				val = value.Unknown{}
			}
			env[name] = val
			continue
		}
		r, ok := s.Resources[name]
		if !ok {
			continue
		}
		if r.Get != nil {
			if _, err := newEv().Eval(r.Get.ID); err != nil {
				report(err, r.Pos)
			}
			continue
		}
		if r.Inputs() == nil {
			continue // let go already (not in a Spec fresh from the loader)
		}
		vals, err := newEv().Inputs(r)
		if err != nil {
			report(err, r.Pos)
			continue
		}
		if c, ok := checkers[r.Type]; ok {
			ds = append(ds, CheckInputs(context.Background(), c, nil, r, r.Inputs(), vals, nil)...)
		}
	}
	for _, name := range sortedOutputs(s) {
		o := s.Outputs[name]
		if _, err := newEv().Eval(o.Expr); err != nil {
			report(err, o.Pos)
		}
	}
	return ds.Sort()
}

// sortedOutputs lists the names of s's outputs in order.
func sortedOutputs(s *specs.Spec) []string {
	names := make([]string, 0, len(s.Outputs))
	for name := range s.Outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
