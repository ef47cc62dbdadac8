package value

import (
	"reflect"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Equal compares a desired value with an observed or prior one under
// the field's schema: set-like lists ignore order and duplicates, and null,
// an empty list and an empty map are the same. An Unknown desired value is
// never equal. Where the prior value holds sealed secrets (it comes from
// state), the desired value is sealed alike before comparing.
func Equal(pr *schemas.Prop, desired, prior any, sl Sealer) bool {
	if identical(desired, prior) {
		return true // most comparisons: no copies in canonical form
	}
	if ContainsUnknown(desired) {
		return false
	}
	var d any
	if ContainsSealed(prior) {
		d = SealTo(desired, prior, sl)
	} else {
		d, _ = RevealShared(desired)
	}
	return Same(CompareForm(pr, d), CompareForm(pr, prior))
}

// identical reports whether a and b are the same plain value (strings,
// booleans, numbers of the same type, nil, and lists and maps of them, no
// sealed secret) in the same order. Such values have the same canonical
// form under any schema; anything else (secrets, unknowns, numbers of
// different types, lists in another order) is for Equal's canonical
// comparison to tell.
func identical(a, b any) bool {
	switch x := a.(type) {
	case nil, string, bool, int64, float64:
		return a == b // false for another type, or the other a number of another type
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, identical)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || IsSealed(x) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !identical(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// CompareForm is the canonical form of v for comparison under prop.
func CompareForm(pr *schemas.Prop, v any) any {
	switch v.(type) {
	case []any, map[string]any:
		// Walked below, each element brought into canonical form there:
		// not copied whole first, at every level.
	default:
		v = resources.Canon(v)
	}
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
			// Sorted by their text forms, each made once, repeats dropped.
			keyed := make([]keyedValue, len(out))
			for i, e := range out {
				keyed[i] = keyedValue{resources.Key(e), e}
			}
			slices.SortFunc(keyed, func(a, b keyedValue) int { return strings.Compare(a.key, b.key) })
			keyed = slices.CompactFunc(keyed, func(a, b keyedValue) bool { return a.key == b.key })
			out = out[:len(keyed)]
			for i, k := range keyed {
				out[i] = k.v
			}
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

// keyedValue is a value of a set-like list with its resources.Key.
type keyedValue struct {
	key string
	v   any
}

// Same reports whether a and b are the same value. It is the engine's one
// equality of values: numbers compare by value whatever their Go type (as
// resources.Canon makes them), maps and lists element by element, a
// Secret is the same as a Secret of the same value only, and an Unknown is
// the same as nothing, not even another Unknown, since it may turn out to
// be anything.
func Same(a, b any) bool {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x == y // most values: no Canon, no reflection
		}
	case Unknown:
		return false
	case Secret:
		y, ok := b.(Secret)
		return ok && Same(x.Value, y.Value)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			if y, ok = resources.Canon(b).(map[string]any); !ok {
				return false
			}
		}
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Same(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			if y, ok = resources.Canon(b).([]any); !ok {
				return false
			}
		}
		return slices.EqualFunc(x, y, Same)
	}
	switch b.(type) {
	case Unknown, Secret:
		return false
	}
	ca := resources.Canon(a)
	switch ca.(type) {
	case map[string]any, []any:
		return Same(ca, b) // a list or map of another Go type
	}
	return reflect.DeepEqual(ca, resources.Canon(b))
}
