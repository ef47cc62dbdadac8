package value

import (
	"reconcile/resources"
	"reconcile/schemas"
	"reflect"
	"sort"
)

// Equal compares a desired value with an observed or prior one under
// the field's schema: set-like lists ignore order and duplicates, and null,
// an empty list and an empty map are the same. An Unknown desired value is
// never equal. Where the prior value holds sealed secrets (it comes from
// state), the desired value is sealed alike before comparing.
func Equal(pr *schemas.Prop, desired, prior any, sl Sealer) bool {
	if ContainsUnknown(desired) {
		return false
	}
	var d any
	if ContainsSealed(prior) {
		d = SealTo(desired, prior, sl)
	} else {
		d, _ = Reveal(desired)
	}
	return reflect.DeepEqual(CompareForm(pr, d), CompareForm(pr, prior))
}

// CompareForm is the canonical form of v for comparison under prop.
func CompareForm(pr *schemas.Prop, v any) any {
	v = resources.Canon(v)
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		if len(x) == 0 {
			return nil
		}
		var items *schemas.Prop
		if pr != nil {
			items = pr.Items
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = CompareForm(items, e)
		}
		if pr != nil && pr.Set {
			seen := map[string]bool{}
			uniq := out[:0]
			for _, e := range out {
				k := resources.Key(e)
				if !seen[k] {
					seen[k] = true
					uniq = append(uniq, e)
				}
			}
			sort.Slice(uniq, func(i, j int) bool { return resources.Key(uniq[i]) < resources.Key(uniq[j]) })
			out = uniq
		}
		return out
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			var sub *schemas.Prop
			if pr != nil {
				if q, ok := pr.Properties[k]; ok {
					sub = q
				} else {
					sub = pr.AdditionalProperties
				}
			}
			if f := CompareForm(sub, e); f != nil {
				out[k] = f
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}
