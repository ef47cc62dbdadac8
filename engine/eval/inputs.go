package eval

import (
	"fmt"
	"maps"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Inputs evaluates the inputs of the resource r (not a get) and returns
// them in a new map, keyed by canonical field names, which the caller may
// fill. Given as a mapping, they are its value. Given as one expression
// (specs.Resource.PropertiesExpr), it must give an object: its keys are
// canonicalised under the schema as the loader does a mapping's (snake_case
// is lowerCamelCase; both spellings of one field are an error), a secret
// object makes each of its fields secret, as Pulumi does, and an object
// known only after apply makes every input so. Anything else is an *Error
// at the expression.
func (ev *Evaluator) Inputs(r *specs.Resource) (map[string]any, error) {
	in, err := ev.inputs(r)
	if err != nil {
		return nil, err
	}
	// Inputs that options.additionalSecretOutputs names are secret, as
	// their outputs are.
	for _, k := range r.Options.AdditionalSecretOutputs {
		if v, ok := in[k]; ok && v != nil {
			in[k] = value.Wrap(v, true)
		}
	}
	return in, nil
}

// inputs is Inputs before additionalSecretOutputs.
func (ev *Evaluator) inputs(r *specs.Resource) (map[string]any, error) {
	if r.Inputs() == nil { // let go (specs.Resource.LetInputsGo)
		return nil, Errorf(r.Pos, "the inputs of %q were evaluated once already, and let go: load the specs again", r.Name)
	}
	if r.PropertiesExpr == nil {
		v, err := ev.Eval(r.Properties)
		if err != nil {
			return nil, err
		}
		return v.(map[string]any), nil
	}
	e := r.PropertiesExpr
	v, err := ev.Eval(e)
	if err != nil {
		return nil, err
	}
	v, secret := value.Unwrap(v)
	switch x := v.(type) {
	case value.Unknown:
		out := map[string]any{}
		for _, k := range r.Schema.Inputs() {
			out[k] = value.Unknown{}
		}
		return out, nil
	case map[string]any:
		canon, err := canonFields(r.Schema.Root, x)
		if err != nil {
			return nil, Errorf(e.Pos(), "properties of %q: %v", r.Name, err)
		}
		out := canon.(map[string]any)
		if secret {
			for k, f := range out {
				out[k] = value.Wrap(f, true)
			}
		}
		return out, nil
	}
	return nil, Errorf(e.Pos(), "properties of %q must be an object of inputs, got %s", r.Name, value.Describe(v))
}

// canonFields returns a copy of v, a value of the schema p, with the keys
// of the objects whose fields the schema names in lowerCamelCase, as the
// loader writes those of a mapping. Both spellings of one field in one
// object are an error. Secret marks and Unknowns stay where they are.
// (Inputs also makes secret the inputs options.additionalSecretOutputs
// names.)
func canonFields(p *schemas.Prop, v any) (any, error) {
	switch x := v.(type) {
	case value.Secret:
		inner, err := canonFields(p, x.Value)
		return value.Secret{Value: inner}, err
	case []any:
		var items *schemas.Prop
		if p != nil {
			items = p.Items
		}
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = canonFields(items, e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		named := p != nil && len(p.Properties) > 0
		out := make(map[string]any, len(x))
		raw := make(map[string]string, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			key := k
			var sub *schemas.Prop
			switch {
			case named:
				key = schemas.CamelCase(k)
				sub = p.Properties[key]
			case p != nil:
				sub = p.AdditionalProperties
			}
			if prev, dup := raw[key]; dup {
				return nil, fmt.Errorf("field %q is given twice, as %q and %q; keep one", key, prev, k)
			}
			raw[key] = k
			f, err := canonFields(sub, x[k])
			if err != nil {
				return nil, err
			}
			out[key] = f
		}
		return out, nil
	}
	return v, nil
}
