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

func ContainsSecret(v any) bool {
	_, s := Reveal(v)
	return s || IsSealed(v)
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

func ContainsUnknown(v any) bool {
	switch x := v.(type) {
	case Unknown:
		return true
	case Secret:
		return ContainsUnknown(x.Value)
	case []any:
		for _, e := range x {
			if ContainsUnknown(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if ContainsUnknown(e) {
				return true
			}
		}
	}
	return false
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
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case Secret:
			walk(x.Value)
		case nil, bool, Unknown:
		default:
			out = append(out, fmt.Sprint(x))
		}
	}
	walk(v)
	return out
}

// secretLeafTexts returns the text of every scalar under a Secret in v:
// the secrets a value computed at plan or apply time holds.
func secretLeafTexts(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case Secret:
			out = append(out, LeafTexts(x.Value)...)
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// RedactionOf is the Redaction of the secrets v holds; nil when none.
func RedactionOf(v any) *Redaction {
	return NewRedaction(secretLeafTexts(v))
}
