package schemas

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prop is the parsed form of one property schema: the subset of JSON Schema
// that reconcile uses, with $ref to $defs resolved. Props reached through
// the same $ref may be one shared value: treat them as read-only.
type Prop struct {
	// Type is "string", "integer", "number", "boolean", "array" or
	// "object", or "" when any type is allowed, or several.
	Type        string
	Description string
	// ReadOnly marks an output only field: never set by the user.
	ReadOnly bool
	// ReplaceOnChange marks an input whose change forces a replacement.
	ReplaceOnChange bool
	// Set marks a list whose order and duplicates do not matter.
	Set bool
	// Expression (document only) says a ${...} expression may stand here
	// instead of a literal of Type.
	Expression bool
	// Ignored (document only) marks a key accepted for Pulumi compatibility
	// that has no effect.
	Ignored bool
	// Default is the value used when the field is absent, in canonical form
	// (int64 for integers, float64, string, bool, []any, map[string]any),
	// or nil if there is none.
	Default any
	// Enum lists the allowed values, in canonical form; nil allows any.
	Enum []any
	// Required names the properties that must be present.
	Required []string
	// Properties are the named fields of an object, by lowerCamelCase name.
	Properties map[string]*Prop
	// AdditionalProperties is the schema of the values of a map: of the
	// fields not named in Properties. It is nil when additionalProperties
	// is false or absent. Every object schema here says false or gives a
	// schema, so for an object nil means no other field is allowed.
	AdditionalProperties *Prop
	// Items is the schema of the elements of an array.
	Items *Prop
	// OneOf lists the alternatives when the schema is a choice, like a
	// config declaration that is either a plain default or an object.
	OneOf []*Prop
}

// Field returns the property called name, exactly as spelled in the
// schema (lowerCamelCase; see CamelCase). It is safe on a nil Prop.
func (p *Prop) Field(name string) (*Prop, bool) {
	if p == nil {
		return nil, false
	}
	f, ok := p.Properties[name]
	return f, ok
}

// CamelCase turns a snake_case field name into the lowerCamelCase spelling
// the schemas use: "model_id" becomes "modelId". Names without an
// underscore, such as "modelId", are returned unchanged, and so is any name
// that is not well-formed snake_case (a leading, trailing or doubled
// underscore, or one before a capital or a non-letter: "displayName_",
// "model__id"): it then names no field, and is reported as unknown rather
// than silently taken for another. It is the one name conversion of
// reconcile: every package that matches field names uses it.
func CamelCase(name string) string {
	if !strings.Contains(name, "_") {
		return name
	}
	parts := strings.Split(name, "_")
	var b strings.Builder
	for i, p := range parts {
		r, size := utf8.DecodeRuneInString(p)
		if p == "" || i > 0 && !(unicode.IsLower(r) || unicode.IsDigit(r)) {
			return name
		}
		if i > 0 {
			b.WriteRune(unicode.ToUpper(r))
			b.WriteString(p[size:])
			continue
		}
		b.WriteString(p)
	}
	return b.String()
}

// parser turns a schema tree into Props, resolving local $refs once each.
type parser struct {
	tree map[string]any
	defs map[string]*Prop // by $ref

	// A $ref with annotations beside it (a description, a flag) becomes a
	// copy of its target with the annotations applied. The target may still
	// be being filled (a recursive definition), so the copies are made by
	// finish, once every definition is complete.
	overlays map[*Prop]*overlay
	order    []*Prop
}

type overlay struct {
	base *Prop
	node map[string]any
	done bool
}

func (p *parser) prop(node any) (*Prop, error) {
	switch n := node.(type) {
	case bool:
		if !n {
			return nil, nil
		}
		return &Prop{}, nil
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			base, err := p.ref(ref)
			if err != nil {
				return nil, err
			}
			if len(n) == 1 {
				return base, nil
			}
			out := &Prop{}
			p.copyLater(out, base, n)
			return out, nil
		}
		out := &Prop{}
		return out, p.fill(out, n)
	}
	return nil, fmt.Errorf("schema is a %T, not an object or a boolean", node)
}

// ref resolves a local reference "#/$defs/NAME", parsing the target once.
func (p *parser) ref(ref string) (*Prop, error) {
	if d, ok := p.defs[ref]; ok {
		return d, nil
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || strings.Contains(name, "/") {
		return nil, fmt.Errorf("unsupported $ref %q: only #/$defs/NAME is", ref)
	}
	defs, _ := p.tree["$defs"].(map[string]any)
	node, ok := defs[unescapeToken(name)].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such definition", ref)
	}
	out := &Prop{}
	p.defs[ref] = out // before filling, so that recursive definitions resolve
	if r, ok := node["$ref"].(string); ok {
		base, err := p.ref(r)
		if err != nil {
			return nil, err
		}
		p.copyLater(out, base, node)
		return out, nil
	}
	return out, p.fill(out, node)
}

// copyLater arranges for finish to make dst a copy of base with the
// annotations of n applied.
func (p *parser) copyLater(dst, base *Prop, n map[string]any) {
	if p.overlays == nil {
		p.overlays = make(map[*Prop]*overlay)
	}
	p.overlays[dst] = &overlay{base: base, node: n}
	p.order = append(p.order, dst)
}

// finish makes the copies arranged by copyLater, bases first.
func (p *parser) finish() {
	for _, dst := range p.order {
		p.apply(dst)
	}
}

func (p *parser) apply(dst *Prop) {
	o := p.overlays[dst]
	if o == nil || o.done {
		return
	}
	o.done = true
	p.apply(o.base) // when the base is itself a copy, it goes first
	*dst = *o.base
	dst.annotate(o.node)
}

func (p *Prop) annotate(n map[string]any) {
	if d, ok := n["description"].(string); ok {
		p.Description = d
	}
	if b, ok := n["readOnly"].(bool); ok {
		p.ReadOnly = b
	}
	if b, ok := n["x-replace-on-change"].(bool); ok {
		p.ReplaceOnChange = b
	}
	if b, ok := n["x-set"].(bool); ok {
		p.Set = b
	}
	if b, ok := n["x-expression"].(bool); ok {
		p.Expression = b
	}
	if b, ok := n["x-ignored"].(bool); ok {
		p.Ignored = b
	}
	if d, ok := n["default"]; ok {
		p.Default = canonical(d)
	}
}

func (p *parser) fill(out *Prop, n map[string]any) error {
	out.annotate(n)
	switch t := n["type"].(type) {
	case string:
		out.Type = t
	case []any:
		if len(t) == 1 {
			out.Type, _ = t[0].(string)
		}
	}
	if e, ok := n["enum"].([]any); ok {
		out.Enum = make([]any, len(e))
		for i, v := range e {
			out.Enum[i] = canonical(v)
		}
	}
	if r, ok := n["required"].([]any); ok {
		for _, name := range r {
			if s, ok := name.(string); ok {
				out.Required = append(out.Required, s)
			}
		}
	}
	if props, ok := n["properties"].(map[string]any); ok {
		out.Properties = make(map[string]*Prop, len(props))
		for name, sub := range props {
			sp, err := p.prop(sub)
			if err != nil {
				return fmt.Errorf("property %q: %w", name, err)
			}
			if sp != nil {
				out.Properties[name] = sp
			}
		}
	}
	var err error
	if sub, ok := n["additionalProperties"]; ok {
		if out.AdditionalProperties, err = p.prop(sub); err != nil {
			return fmt.Errorf("additionalProperties: %w", err)
		}
	}
	if sub, ok := n["items"]; ok {
		if out.Items, err = p.prop(sub); err != nil {
			return fmt.Errorf("items: %w", err)
		}
	}
	if alts, ok := n["oneOf"].([]any); ok {
		for i, sub := range alts {
			sp, err := p.prop(sub)
			if err != nil {
				return fmt.Errorf("oneOf %d: %w", i, err)
			}
			if sp != nil {
				out.OneOf = append(out.OneOf, sp)
			}
		}
	}
	return nil
}

// canonical converts a decoded JSON value (numbers as json.Number) into
// the canonical form: int64 for integers, float64 for other numbers.
func canonical(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	}
	return v
}

// unescapeToken undoes the JSON Pointer escapes of one reference token.
func unescapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
