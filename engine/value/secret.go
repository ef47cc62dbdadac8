package value

import (
	"encoding/json"
	"fmt"
)

// IsSecret reports whether v is a Secret.
func IsSecret(v any) bool {
	_, ok := v.(Secret)
	return ok
}

// ContainsSecret reports whether v holds a Secret or a sealed secret.
func ContainsSecret(v any) bool {
	return contains(v, func(v any) bool { return IsSecret(v) || IsSealed(v) })
}

// Visit calls fn on v and, where fn returns true, on the value of a Secret
// and each element of a map or list, depth first. It is the one walk over
// the values of the model: the Contains functions and the texts of secrets
// use it.
func Visit(v any, fn func(v any) bool) {
	if !fn(v) {
		return
	}
	switch x := v.(type) {
	case Secret:
		Visit(x.Value, fn)
	case []any:
		for _, e := range x {
			Visit(e, fn)
		}
	case map[string]any:
		for _, e := range x {
			Visit(e, fn)
		}
	}
}

// contains reports whether v, or anything in it, satisfies is.
func contains(v any, is func(any) bool) bool {
	found := false
	Visit(v, func(v any) bool {
		found = found || is(v)
		return !found
	})
	return found
}

// CanonicalJSON encodes v as JSON with sorted keys, secrets revealed.
func CanonicalJSON(v any) string {
	plain, _ := Reveal(v)
	b, err := json.Marshal(plain)
	if err != nil {
		return fmt.Sprint(plain)
	}
	return string(b)
}

// ContainsUnknown reports whether v holds an Unknown.
func ContainsUnknown(v any) bool {
	return contains(v, func(v any) bool { _, ok := v.(Unknown); return ok })
}

func Unwrap(v any) (any, bool) {
	if s, ok := v.(Secret); ok {
		return s.Value, true
	}
	return v, false
}

func Wrap(v any, secret bool) any {
	if !secret {
		return v
	}
	if _, already := v.(Secret); already {
		return v
	}
	return Secret{Value: v}
}

// SecretFields returns a copy of m with each field but null wrapped as a
// Secret: the results of a lookup or a get that is secret as a whole (an
// argument held a secret), field by field, as a plan shows them and state
// keeps them sealed.
func SecretFields(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
		if v != nil {
			out[k] = Wrap(v, true)
		}
	}
	return out
}

// RevealShared is Reveal, except that a value holding no Secret is
// returned as it is, not copied: the result may share its maps and lists
// with v, and neither may be changed afterwards.
func RevealShared(v any) (any, bool) {
	if !contains(v, IsSecret) {
		return v, false
	}
	return Reveal(v)
}

// Reveal returns v with every Secret unwrapped, and whether it held
// any.
func Reveal(v any) (any, bool) {
	switch x := v.(type) {
	case Secret:
		inner, _ := Reveal(x.Value)
		return inner, true
	case []any:
		out := make([]any, len(x))
		any := false
		for i, e := range x {
			var s bool
			out[i], s = Reveal(e)
			any = any || s
		}
		return out, any
	case map[string]any:
		out := make(map[string]any, len(x))
		any := false
		for k, e := range x {
			var s bool
			out[k], s = Reveal(e)
			any = any || s
		}
		return out, any
	}
	return v, false
}

// Unknown stands for a value that is not known until apply: an output of a
// resource not yet created, or anything computed from one. Renderers show
// it as "(known after apply)".
type Unknown struct{}

// Secret wraps a value marked with fn::secret. Renderers never show the
// wrapped value; they show "(sensitive value)".
type Secret struct{ Value any }

// LeafTexts returns the text of every scalar in v but null and booleans.
func LeafTexts(v any) []string {
	var out []string
	Visit(v, func(v any) bool {
		switch v.(type) {
		case map[string]any, []any, Secret, nil, bool, Unknown:
			return true
		}
		out = append(out, fmt.Sprint(v))
		return false
	})
	return out
}

// secretLeafTexts returns the text of every scalar under a Secret in v:
// the secrets a value computed at plan or apply time holds.
func secretLeafTexts(v any) []string {
	var out []string
	Visit(v, func(v any) bool {
		if s, ok := v.(Secret); ok {
			out = append(out, LeafTexts(s.Value)...)
			return false
		}
		return true
	})
	return out
}

// RedactionOf is the Redaction of the secrets v holds; nil when none.
func RedactionOf(v any) *Redaction {
	return NewRedaction(secretLeafTexts(v))
}
