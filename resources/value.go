package resources

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
)

// Canon converts v into the JSON shape Attrs values use: integral numbers
// become int64, other numbers float64, maps map[string]any and slices []any.
// Values of other kinds are returned unchanged.
func Canon(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return Canon(float64(x))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Canon(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Canon(e)
		}
		return out
	case Attrs:
		return map[string]any(CanonAttrs(x))
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	}
	return v
}

// CanonShared is Canon, except that a value already in that shape is
// returned as it is rather than copied: the result may share its maps and
// lists with v, and neither may be changed afterwards.
func CanonShared(v any) any {
	if isCanon(v) {
		return v
	}
	return Canon(v)
}

// isCanon reports whether Canon(v) would equal v.
func isCanon(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != math.Trunc(x) || math.Abs(x) >= 1<<53
	case int, int32, uint64, float32, json.Number, []string, Attrs, map[string]string:
		return false
	case []any:
		for _, e := range x {
			if !isCanon(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range x {
			if !isCanon(e) {
				return false
			}
		}
	}
	return true
}

// CanonAttrs applies Canon to every value of a.
func CanonAttrs(a Attrs) Attrs {
	if a == nil {
		return nil
	}
	out := make(Attrs, len(a))
	for k, v := range a {
		out[k] = Canon(v)
	}
	return out
}

// Equal reports whether two canonical values are equal. Numbers compare by
// value whatever their Go type.
func Equal(a, b any) bool {
	return reflect.DeepEqual(Canon(a), Canon(b))
}

// SetEqual reports whether two lists hold the same elements, ignoring order
// and duplicates. Use it for set-like lists (principals, bindings).
func SetEqual(a, b []any) bool {
	return reflect.DeepEqual(setKeys(a), setKeys(b))
}

func setKeys(l []any) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range l {
		k := Key(e)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Key returns a deterministic text form of a canonical value, usable as a map
// key or sort key: JSON with sorted object keys.
func Key(v any) string {
	b, err := json.Marshal(Canon(v))
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}
