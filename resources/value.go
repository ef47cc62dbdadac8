package resources

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
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

// isCanon reports whether Canon(v) would equal v: CanonShared(v) is v.
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

// CanonAttrsShared is CanonAttrs, sharing the values already canonical
// instead of copying them: a itself when all are, else a new map (empty
// for nil). The result may share its maps and lists with a.
func CanonAttrsShared(a Attrs) Attrs {
	all := a != nil
	for _, v := range a {
		if all = isCanon(v); !all {
			break
		}
	}
	if all {
		return a
	}
	out := make(Attrs, len(a))
	for k, v := range a {
		out[k] = CanonShared(v)
	}
	return out
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
	v = CanonShared(v)
	if b, ok := appendKey(make([]byte, 0, 64), v); ok {
		return string(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// appendKey appends what json.Marshal writes for v, a canonical value, when
// it can tell that quickly and exactly: null, booleans, integers, strings
// of printable ASCII that JSON writes as they are, and lists and maps of
// those. It reports false for anything else (floats, other strings).
func appendKey(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case string:
		for i := 0; i < len(x); i++ {
			// json.Marshal escapes quotes, backslashes, controls, and
			// <, > and & for HTML.
			if c := x[i]; c < ' ' || c > '~' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return b, false
			}
		}
		b = append(b, '"')
		b = append(b, x...)
		return append(b, '"'), true
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendKey(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendKey(b, k); !ok {
				return b, false
			}
			b = append(b, ':')
			if b, ok = appendKey(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}
