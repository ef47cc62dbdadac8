package render

import "github.com/reconcile-dev/reconcile/engine/value"

// JSONValue returns v in JSON shape with every Unknown and Secret replaced
// by null, for machine-readable output.
func JSONValue(v any) any {
	var unknown, sensitive []string
	return jsonValue(value.UnsealForDisplay(v), "", &unknown, &sensitive)
}

// DisplayValue renders v on one line for people: strings quoted, secrets
// as (sensitive value), unknowns as (known after apply).
func DisplayValue(v any) string {
	return value.OneLine(value.UnsealForDisplay(v))
}
