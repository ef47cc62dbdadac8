package eval

import (
	"sort"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
)

// Outputs is what state keeps as a resource's outputs: every attribute
// but the inputs the specs manage (which it keeps as inputs), so also the
// cloud's value of an input the specs leave to it (a generated
// displayName), which references read.
func Outputs(attrs, managed map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range attrs {
		if _, isInput := managed[k]; !isInput {
			out[k] = v
		}
	}
	return out
}

// SameOutputs reports whether recorded holds what Outputs(attrs,
// managed) would, without making it.
func SameOutputs(recorded, attrs, managed map[string]any) bool {
	n := 0
	for k, v := range attrs {
		if _, isInput := managed[k]; isInput {
			continue
		}
		n++
		if r, ok := recorded[k]; !ok || !value.Same(r, v) {
			return false
		}
	}
	return n == len(recorded)
}

// ManagedInputs keeps the inputs of attrs that reconcile manages: those the
// specs set now (desired) or set at the last apply (applied). An input the
// specs never set is the cloud's to choose (OCI names an endpoint when no
// displayName is given), so it is never a difference; an input removed from
// the specs since the last apply still is, so that apply clears it.
func ManagedInputs(s *schemas.Schema, attrs, desired, applied map[string]any) map[string]any {
	out := Inputs(s, attrs)
	for k := range out {
		_, want := desired[k]
		_, had := applied[k]
		if !want && !had {
			delete(out, k)
		}
	}
	return out
}

// DiffInputs compares the prior inputs with the desired ones and returns the
// sorted names of the top-level inputs that differ. Fields named by
// ignoreChanges take their prior value in desired.
func DiffInputs(s *schemas.Schema, prior, desired map[string]any, ignore []specs.PathOpt, sl value.Sealer) []string {
	for _, po := range ignore {
		ApplyIgnore(po, prior, desired)
	}
	var changed []string
	for k, pr := range s.Root.Properties {
		if !pr.ReadOnly && !value.Equal(pr, desired[k], prior[k], sl) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

// DiffManaged is DiffInputs of the managed inputs of attrs (see
// ManagedInputs) with desired and no ignoreChanges, without making the
// map of the managed inputs.
func DiffManaged(s *schemas.Schema, attrs, desired, applied map[string]any, sl value.Sealer) []string {
	var changed []string
	for k, pr := range s.Root.Properties {
		if pr.ReadOnly {
			continue
		}
		var prior any // absent unless managed
		if _, want := desired[k]; want {
			prior = attrs[k]
		} else if _, had := applied[k]; had {
			prior = attrs[k]
		}
		if !value.Equal(pr, desired[k], prior, sl) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

// ApplyIgnore copies the prior value at an ignoreChanges path into desired.
// Paths are a top-level field, optionally followed by one map key
// (tags["env"] or tags.env); anything deeper ignores the whole field.
func ApplyIgnore(po specs.PathOpt, prior, desired map[string]any) {
	rest := strings.TrimPrefix(po.Path, po.Top)
	key := ""
	switch {
	case strings.HasPrefix(rest, `["`) && strings.HasSuffix(rest, `"]`) && !strings.Contains(rest[2:len(rest)-2], `"`):
		key = rest[2 : len(rest)-2]
	case strings.HasPrefix(rest, ".") && !strings.ContainsAny(rest[1:], ".[]"):
		key = rest[1:]
	}
	if key == "" {
		if v, ok := prior[po.Top]; ok {
			desired[po.Top] = v
		} else {
			delete(desired, po.Top)
		}
		return
	}
	pm, _ := prior[po.Top].(map[string]any)
	dm, ok := desired[po.Top].(map[string]any)
	if !ok {
		if pm == nil {
			return
		}
		dm = map[string]any{}
	}
	dm = Merge(dm)
	if v, ok := pm[key]; ok {
		dm[key] = v
	} else {
		delete(dm, key)
	}
	desired[po.Top] = dm
}

// WithoutVendorKeys returns attrs without the map entries the driver d
// says the cloud adds by itself (resources.VendorKeys) whose key no map of
// refs sets under the same field. attrs is not modified; a map left empty
// is dropped.
func WithoutVendorKeys(d any, attrs map[string]any, refs ...map[string]any) map[string]any {
	vk, ok := d.(resources.VendorKeys)
	if !ok || attrs == nil {
		return attrs
	}
	var out map[string]any
	for field, v := range attrs {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		var kept map[string]any
		for k := range m {
			if !vk.VendorKey(field, k) || refSets(refs, field, k) {
				continue
			}
			if kept == nil {
				kept = Merge(m)
			}
			delete(kept, k)
		}
		if kept == nil {
			continue
		}
		if out == nil {
			out = Merge(attrs)
		}
		if len(kept) == 0 {
			delete(out, field)
		} else {
			out[field] = kept
		}
	}
	if out == nil {
		return attrs
	}
	return out
}

// refSets reports whether any of refs sets key in its map field.
func refSets(refs []map[string]any, field, key string) bool {
	for _, r := range refs {
		v, _ := value.Reveal(r[field])
		if m, ok := v.(map[string]any); ok {
			if _, set := m[key]; set {
				return true
			}
		}
	}
	return false
}

// EnvFunc is an Env made of a function.
type EnvFunc func(string) (any, bool)

func (f EnvFunc) Lookup(name string) (any, bool) { return f(name) }

// Options are a resource's options as the specs set them now.
type Options struct {
	Protect, DeleteBeforeReplace, RetainOnDelete bool
}

// ResourceOptions evaluates r's boolean options with ev. An option that
// is not true or false (yet: known only after apply) is an *Error at
// its expression.
func ResourceOptions(r *specs.Resource, ev *Evaluator) (Options, error) {
	var out Options
	for _, o := range []struct {
		name string
		e    specs.Expr
		dst  *bool
	}{{"protect", r.Options.Protect, &out.Protect}, {"deleteBeforeReplace", r.Options.DeleteBeforeReplace, &out.DeleteBeforeReplace}, {"retainOnDelete", r.Options.RetainOnDelete, &out.RetainOnDelete}} {
		if o.e == nil {
			continue
		}
		v, err := ev.Eval(o.e)
		if err != nil {
			return out, err
		}
		v, _ = value.Reveal(v)
		b, ok := v.(bool)
		if !ok {
			return out, Errorf(o.e.Pos(), "%s of %q must be true or false when planning, got %s", o.name, r.Name, DescribeValue(v))
		}
		*o.dst = b
	}
	return out, nil
}

// DescribeValue says in words what kind of value v is, for diagnostics.
func DescribeValue(v any) string {
	if _, ok := v.(value.Unknown); ok {
		return "a value known only after apply"
	}
	return value.Describe(v)
}

// Normalize applies the driver's Normalizer, when it has one, to the
// top-level desired inputs that are known and hold no secret; the others
// are left as they are. A plan and the apply that follows it normalize the
// same known fields the same way, whichever others are still unknown (a
// model's modelDetails while its projectId is known only after apply).
func Normalize(reg resources.Registry, token string, desired map[string]any) map[string]any {
	d, ok := reg.Drivers[token]
	if !ok {
		return desired
	}
	n, ok := d.(resources.Normalizer)
	if !ok {
		return desired
	}
	// Most inputs are all known and hold no secret: the driver then
	// normalizes them as they are, without a copy.
	var held map[string]any // fields unknown or holding a secret
	for k, v := range desired {
		if heldApart(v) {
			if held == nil {
				held = map[string]any{}
			}
			held[k] = v
		}
	}
	plain := desired
	if held != nil {
		plain = make(map[string]any, len(desired)-len(held))
		for k, v := range desired {
			if _, ok := held[k]; !ok {
				plain[k] = v
			}
		}
	}
	// The driver's result is its own, and what it kept of plain is not
	// changed after: its values are shared, not copied again.
	out := map[string]any(resources.CanonAttrsShared(n.Normalize(resources.Attrs(plain))))
	for k, v := range held {
		out[k] = v
	}
	return out
}

// heldApart reports whether Normalize leaves v, an input, out of the
// driver's normalization: it is unknown, or holds one, or holds a Secret.
func heldApart(v any) bool {
	found := false
	value.Visit(v, func(x any) bool {
		_, unknown := x.(value.Unknown)
		found = found || unknown || value.IsSecret(x)
		return !found
	})
	return found
}

// CreatedView is what references to a resource being created see: its
// inputs, and Unknown for every output the cloud assigns. desired is given
// up: the Unknowns are added to it, and it is returned.
func CreatedView(s *schemas.Schema, desired map[string]any) map[string]any {
	if desired == nil {
		desired = make(map[string]any, len(s.Root.Properties)+1)
	}
	for k, pr := range s.Root.Properties {
		if _, set := desired[k]; !set && pr.ReadOnly {
			desired[k] = value.Unknown{}
		}
	}
	desired["id"] = value.Unknown{}
	return desired
}

// CreatedRefView is what references to a resource being created see: its
// planned view, and Unknown for every input the specs leave unset too, since
// the cloud may choose it (OCI names an endpoint given no displayName).
// It is after itself when after sets every property, and shares its values.
func CreatedRefView(s *schemas.Schema, after map[string]any) map[string]any {
	var out map[string]any
	for k := range s.Root.Properties {
		if _, set := after[k]; set {
			continue
		}
		if out == nil {
			out = Merge(after)
		}
		out[k] = value.Unknown{}
	}
	if out == nil {
		return after
	}
	return out
}

// UpdatedView is a resource after an in-place update: the prior outputs
// and unmanaged inputs (see ManagedInputs) with the desired inputs; an input
// removed from the specs since the last apply is gone.
func UpdatedView(s *schemas.Schema, before, desired, applied map[string]any) map[string]any {
	out := make(map[string]any, len(before)+len(desired))
	for k, v := range before {
		_, had := applied[k]
		if pr, ok := s.Root.Properties[k]; !ok || pr.ReadOnly || !had {
			out[k] = v
		}
	}
	for k, v := range desired {
		out[k] = v
	}
	return out
}

// ViewIsBefore reports whether UpdatedView(s, before, desired, applied)
// holds what before holds, so that a no-op can show before as it is
// without building the view.
func ViewIsBefore(s *schemas.Schema, before, desired, applied map[string]any) bool {
	for k, v := range desired {
		if bv, ok := before[k]; !ok || !value.Same(bv, v) {
			return false
		}
	}
	for k := range applied {
		if _, kept := desired[k]; kept {
			continue
		}
		if _, ok := before[k]; !ok {
			continue
		}
		if pr, ok := s.Root.Properties[k]; ok && !pr.ReadOnly {
			return false // the view leaves out an input removed from the specs
		}
	}
	return true
}

// Merge returns a new map with the entries of ms, a later map's winning.
func Merge(ms ...map[string]any) map[string]any {
	n := 1 // room for the id most callers add
	for _, m := range ms {
		n += len(m)
	}
	out := make(map[string]any, n)
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Inputs keeps the input fields of attrs.
func Inputs(s *schemas.Schema, attrs map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range attrs {
		if pr, ok := s.Root.Properties[k]; ok && !pr.ReadOnly {
			out[k] = v
		}
	}
	return out
}

// SecretOutputs returns attrs, a view of the resource r, with the fields
// that r's options.additionalSecretOutputs names made secret: a value is
// wrapped as value.Secret; a sealed one (read from state, which keeps it
// only as its digest) becomes a Secret without its value, for renderers,
// or with forRefs a secret Unknown, since what references it can be known
// only once the value is read again. attrs itself is returned when r
// names no field.
func SecretOutputs(r *specs.Resource, attrs map[string]any, forRefs bool) map[string]any {
	if len(r.Options.AdditionalSecretOutputs) == 0 || attrs == nil {
		return attrs
	}
	out := Merge(attrs)
	for _, k := range r.Options.AdditionalSecretOutputs {
		v, ok := out[k]
		switch {
		case !ok || v == nil:
		case value.IsSealed(v) && forRefs:
			out[k] = value.Secret{Value: value.Unknown{}}
		case value.IsSealed(v):
			out[k] = value.Secret{}
		default:
			out[k] = value.Wrap(v, true)
		}
	}
	return out
}

// SecretNotGiven returns the fields that r's
// options.additionalSecretOutputs names and desired, the inputs the specs
// give, does not: outputs, and inputs left to the cloud, which state keeps
// only as digests.
func SecretNotGiven(r *specs.Resource, desired map[string]any) []string {
	var out []string
	for _, k := range r.Options.AdditionalSecretOutputs {
		if desired[k] == nil {
			out = append(out, k)
		}
	}
	return out
}
