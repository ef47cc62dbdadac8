package eval

import (
	"context"
	"fmt"

	"reconcile/engine/specs"
	"reconcile/resources"
)

// Lookup calls the lookup function with args, in clear, and returns its
// result in canonical form. Planning, applying and drift all call lookups
// through it.
func Lookup(ctx context.Context, reg resources.Registry, function string, args map[string]any) (map[string]any, error) {
	fn, ok := reg.Functions[function]
	if !ok {
		return nil, fmt.Errorf("no driver is configured for %s", function)
	}
	res, err := fn.Invoke(ctx, resources.Attrs(args))
	if err != nil {
		return nil, err
	}
	return resources.CanonAttrs(res), nil
}

// Invoker returns an Evaluator's Invoke that calls lookups with Lookup,
// its errors at the fn::invoke's position.
func Invoker(ctx context.Context, reg resources.Registry) func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
	return func(inv *specs.Invoke, args map[string]any) (map[string]any, error) {
		if _, ok := reg.Functions[inv.Function]; !ok {
			return nil, Errorf(inv.P, "no driver is configured for %s", inv.Function)
		}
		res, err := Lookup(ctx, reg, inv.Function, args)
		if err != nil {
			return nil, Errorf(inv.P, "fn::invoke %s: %v", inv.Function, err)
		}
		return res, nil
	}
}
