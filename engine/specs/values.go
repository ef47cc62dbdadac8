package specs

import (
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Validating, when planning, the values of an object that Load validated
// the literals of: only what is not one of those literals is validated
// again.

// ValueViolations validates vals, the value of obj as planning evaluates
// it (value.Unknown where not known, value.Secret around secrets, schema
// defaults added), against s, and returns the violations as diagnostics
// at the expressions that gave the values, as Violations does for the
// whole value with its unknown parts left out. When Load validated the
// literals of obj against s, finding nothing wrong, only the values that
// are not those literals are validated: the computed ones and the
// defaults, each against the schema at its path (schemas.ValidateParts).
// what names the object in messages, as for Violations; it is called only
// when there is a message.
func ValueViolations(s *schemas.Schema, obj Expr, vals map[string]any, what func() string) diag.Diagnostics {
	if ds, ok := violationsApart(s, obj, vals, what); ok {
		return ds
	}
	inst, dyn := knownValue(vals)
	vs := s.Validate(inst)
	if len(vs) == 0 {
		return nil
	}
	return diagnose(s, obj, vs, dyn, what())
}

// violationsApart is ValueViolations when it can validate only what is
// not a literal Load validated, and reports false when it cannot.
func violationsApart(s *schemas.Schema, e Expr, vals map[string]any, what func() string) (diag.Diagnostics, bool) {
	obj, _ := e.(*Object)
	if obj == nil || obj.validated != s {
		return nil, false
	}
	// Room for the path of any part but a deep one, and for a few parts.
	parts, ok := computedParts(obj, vals, make([]string, 0, 8), make([]schemas.Part, 0, 4))
	if !ok {
		return nil, false
	}
	if len(parts) == 0 {
		return nil, true
	}
	var dyn map[string]bool
	for i := range parts {
		kv, known := knownPart(parts[i].Value, parts[i].Path, &dyn)
		if !known {
			// Not known at all: the validator takes a value of a type
			// it does not know as not known.
			kv = value.Unknown{}
		}
		parts[i].Value = kv
	}
	vs, ok := s.ValidateParts(parts)
	if !ok {
		return nil, false
	}
	if len(vs) == 0 {
		return nil, true
	}
	return diagnose(s, obj, vs, dyn, what()), true
}

// computedParts appends to out the values of v, the value of e at path,
// that are not literals of e: what an expression other than a literal
// gave, a literal's value replaced (by a default), an entry that e does
// not have. It reports false when v lacks an entry of e, or has another
// shape at the top.
func computedParts(e Expr, v any, path []string, out []schemas.Part) ([]schemas.Part, bool) {
	part := func() ([]schemas.Part, bool) {
		return append(out, schemas.Part{Path: slices.Clone(path), Value: v}), len(path) > 0
	}
	switch x := e.(type) {
	case *Lit:
		if sameLiteral(x.Value, v) {
			return out, true
		}
		return part()
	case *Const:
		if x.Is(v) {
			return out, true
		}
		return part()
	case *List:
		l, ok := v.([]any)
		if !ok || len(l) != len(x.Items) {
			return part()
		}
		for i, it := range x.Items {
			if out, ok = computedParts(it, l[i], append(path, strconv.Itoa(i)), out); !ok {
				return nil, false
			}
		}
		return out, true
	case *Object:
		m, ok := v.(map[string]any)
		if !ok {
			return part()
		}
		for _, en := range x.Entries {
			ev, has := m[en.Key]
			if !has {
				return nil, false
			}
			if out, ok = computedParts(en.Value, ev, append(path, en.Key), out); !ok {
				return nil, false
			}
		}
		if len(m) > len(x.Entries) {
			for k, ev := range m {
				if x.Get(k) == nil {
					out = append(out, schemas.Part{Path: append(slices.Clone(path), k), Value: ev})
				}
			}
		}
		return out, true
	}
	return part()
}

// sameLiteral reports whether v is the literal lit: nil, a bool, an
// int64, a float64 or a string.
func sameLiteral(lit, v any) bool {
	switch l := lit.(type) {
	case nil:
		return v == nil
	case bool:
		b, ok := v.(bool)
		return ok && b == l
	case int64:
		n, ok := v.(int64)
		return ok && n == l
	case float64:
		f, ok := v.(float64)
		return ok && f == l
	case string:
		s, ok := v.(string)
		return ok && s == l
	}
	return false
}

// knownValue returns vals without its Unknown parts and with secrets
// revealed, and the paths (joined by "/") of the unknown parts.
func knownValue(vals map[string]any) (map[string]any, map[string]bool) {
	dyn := map[string]bool{}
	out, _ := knownPart(vals, nil, &dyn)
	m, _ := out.(map[string]any)
	return m, dyn
}

// knownPart returns v, the value at path, without its Unknown parts and
// with secrets revealed, and false when v is not known at all. It adds
// the paths of the unknown parts to *dyn, making the map when needed.
func knownPart(v any, path []string, dyn *map[string]bool) (any, bool) {
	switch x := v.(type) {
	case value.Unknown:
		if *dyn == nil {
			*dyn = map[string]bool{}
		}
		(*dyn)[strings.Join(path, "/")] = true
		return nil, false
	case value.Secret:
		return knownPart(x.Value, path, dyn)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i], _ = knownPart(e, append(path, strconv.Itoa(i)), dyn)
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if w, ok := knownPart(e, append(path, k), dyn); ok {
				out[k] = w
			}
		}
		return out, true
	}
	return v, true
}
