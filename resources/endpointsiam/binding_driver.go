package endpointsiam

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// BindingDriver manages gcp:endpoints:ServiceIamBinding and
// gcp:endpoints:ConsumersIamBinding: it is authoritative for one role
// (under one condition) of a policy, whose members become exactly
// members; the policy's other bindings are left alone. Its id is the
// provider's import id, "RESOURCE ROLE" or, with a condition,
// "RESOURCE ROLE TITLE". Attributes:
//
//	serviceName, consumerProject  the target, as for PolicyDriver
//	role       string  e.g. "roles/servicemanagement.serviceConsumer"
//	members    []any   of string, sorted; at least one
//	condition  map     {title, expression, description}; absent for none
//	etag       string  output: the policy's etag as last read or written
type BindingDriver struct {
	base
}

var (
	_ resources.Driver         = (*BindingDriver)(nil)
	_ resources.Normalizer     = (*BindingDriver)(nil)
	_ resources.Recoverer      = (*BindingDriver)(nil)
	_ resources.ResultComparer = (*BindingDriver)(nil)
)

// NewServiceBinding returns the gcp:endpoints:ServiceIamBinding driver.
func NewServiceBinding(cl *Client) *BindingDriver {
	return &BindingDriver{base{cl: cl, scope: serviceScope}}
}

// NewConsumersBinding returns the gcp:endpoints:ConsumersIamBinding driver.
func NewConsumersBinding(cl *Client) *BindingDriver {
	return &BindingDriver{base{cl: cl, scope: consumersScope}}
}

// bindingInputs are the inputs of a binding.
type bindingInputs struct {
	t       target
	role    string
	members []string
	cond    *gcpiam.Expr
}

func (d *BindingDriver) inputs(want resources.Attrs) (bindingInputs, error) {
	var in bindingInputs
	var err error
	if in.t, err = d.scope.targetOf(want); err != nil {
		return in, err
	}
	if in.role, err = roleArg(want); err != nil {
		return in, err
	}
	if in.members, err = membersArg(want); err != nil {
		return in, err
	}
	in.cond, err = conditionArg(want)
	return in, err
}

func (in bindingInputs) id() string {
	return iamID{target: in.t, role: in.role, title: titleOf(in.cond)}.String()
}

// Read returns the binding the id names: the members of its role (under
// the condition of its title, or without condition). A role without
// members has no binding: Read returns resources.ErrNotFound. An id naming
// a title that several conditions of the role have is an error.
func (d *BindingDriver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	bid, err := d.scope.parseID(id, 2)
	if err != nil {
		return nil, resources.Refused(err)
	}
	p, err := d.cl.get(ctx, bid.target)
	if err != nil {
		return nil, err
	}
	b, ok, err := findBinding(p.doc, bid.role, bid.title)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: the policy of %q has no binding of %s%s", resources.ErrNotFound, bid.resource(), bid.role, conditionText(bid.title))
	}
	return d.attrs(bid.target, b, p.etag), nil
}

func conditionText(title string) string {
	if title == "" {
		return " without condition"
	}
	return fmt.Sprintf(" under a condition titled %q", title)
}

func (d *BindingDriver) attrs(t target, b gcpiam.Binding, etag string) resources.Attrs {
	out := t.attrs()
	out["id"] = iamID{target: t, role: b.Role, title: titleOf(b.Condition)}.String()
	out["role"] = b.Role
	out["members"] = resources.Canon(b.Members)
	if c := conditionAttr(b.Condition); c != nil {
		out["condition"] = c
	}
	out["etag"] = etag
	return out
}

// write makes members the members of the binding, read-modify-write.
func (d *BindingDriver) write(ctx context.Context, in bindingInputs) (resources.Attrs, error) {
	p, _, err := d.cl.modify(ctx, in.t, "", d.writeEdit(in))
	if err != nil {
		return nil, err
	}
	b, ok, err := findBinding(p.doc, in.role, titleOf(in.cond))
	if err != nil || !ok {
		return nil, fmt.Errorf("the binding written is not in the policy: %v", err)
	}
	return d.attrs(in.t, b, p.etag), nil
}

// writeEdit makes members the members of the binding.
func (d *BindingDriver) writeEdit(in bindingInputs) editor {
	key := keyOf(in.role, in.cond)
	return func(doc *gcpiam.Policy) (bool, error) {
		if err := checkTitle(*doc, key); err != nil {
			return false, err
		}
		if slices.Equal(doc.Members()[key], in.members) {
			return false, nil
		}
		kept := doc.Bindings[:0:0]
		for _, b := range doc.Bindings {
			if gcpiam.KeyOf(b) != key {
				kept = append(kept, b)
			}
		}
		doc.Bindings = append(kept, gcpiam.Binding{Role: in.role, Members: in.members, Condition: in.cond})
		return true, nil
	}
}

// Create grants the role to exactly members, replacing the members the
// role had (under the same condition). Bad inputs, a failed read and a
// refused write match resources.ErrRefused; so does a condition whose
// title another condition of the role has (ids name conditions by title).
func (d *BindingDriver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	in, err := d.inputs(want)
	if err != nil {
		return "", nil, err
	}
	got, err := d.write(ctx, in)
	if err != nil {
		return "", nil, err
	}
	return in.id(), got, nil
}

// Update makes members the role's members. Everything else forces a
// replacement (declared in the schema): Update reports a change of it as
// an AttrError.
func (d *BindingDriver) Update(ctx context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	in, err := d.inputs(want)
	if err != nil {
		return nil, err
	}
	if in.id() != id {
		if bid, err := d.scope.parseID(id, 2); err != nil || bid.String() != in.id() {
			return nil, &resources.AttrError{Path: []string{"role"}, Err: fmt.Errorf("binding %q cannot become %q in place: %w", id, in.id(), errNoUpdate)}
		}
	}
	got, err := d.write(ctx, in)
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Delete removes the binding of the role (under the condition of the id's
// title, or without condition); the role's other bindings and the other
// roles stay. A binding already gone is not an error.
func (d *BindingDriver) Delete(ctx context.Context, id string) error {
	bid, err := d.scope.parseID(id, 2)
	if err != nil {
		return resources.Refused(err)
	}
	_, _, err = d.cl.modify(ctx, bid.target, "", d.deleteEdit(bid))
	if err != nil {
		return err
	}
	return nil
}

// deleteEdit removes the binding an id names, if there is one.
func (d *BindingDriver) deleteEdit(bid iamID) editor {
	return func(doc *gcpiam.Policy) (bool, error) {
		b, ok, err := findBinding(*doc, bid.role, bid.title)
		if err != nil || !ok {
			return false, err
		}
		key := gcpiam.KeyOf(b)
		kept := doc.Bindings[:0:0]
		for _, b := range doc.Bindings {
			if gcpiam.KeyOf(b) != key {
				kept = append(kept, b)
			}
		}
		doc.Bindings = kept
		return true, nil
	}
}

// Normalize writes the target in canonical form, members sorted without
// repeats, and a condition without an empty description.
func (d *BindingDriver) Normalize(want resources.Attrs) resources.Attrs {
	out := copyAttrs(want)
	d.canonTarget(want, out)
	if ms, err := membersArg(want); err == nil {
		out["members"] = resources.Canon(ms)
	}
	if c, err := conditionArg(want); err == nil && c != nil {
		out["condition"] = conditionAttr(c)
	}
	return out
}

// Recover finds what an interrupted Create wrote: the binding its inputs
// name, if it holds exactly their members, is adopted. Otherwise the
// create did not land (or was undone since), and Recover reports that it
// made nothing: the next plan writes the binding again, which is
// idempotent. It needs the inputs in clear.
func (d *BindingDriver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := hiddenInputs(req, "serviceName", "consumerProject", "role", "members", "condition"); err != nil {
		return "", nil, err
	}
	in, err := d.inputs(req.Want)
	if err != nil {
		return "", nil, err
	}
	got, err := d.Read(ctx, in.id())
	if errors.Is(err, resources.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if !resources.Equal(got["members"], resources.Canon(in.members)) || !resources.Equal(got["condition"], conditionAttr(in.cond)) {
		return "", nil, nil
	}
	return in.id(), got, nil
}

// EqualResultField compares members as sets; other fields with
// resources.Equal.
func (d *BindingDriver) EqualResultField(field string, a, b any) bool {
	if field == "members" {
		as, aok := resources.Canon(a).([]any)
		bs, bok := resources.Canon(b).([]any)
		if aok && bok {
			return resources.SetEqual(as, bs)
		}
	}
	return resources.Equal(a, b)
}

// DescribeResultChange names the members added to and removed from the
// role, as the policy lookups do:
//
//	binding roles/viewer: -user:alice@example.com +user:bob@example.com
func (d *BindingDriver) DescribeResultChange(before, after resources.Attrs) []string {
	role, _ := after["role"].(string)
	if role == "" {
		role, _ = before["role"].(string)
	}
	a, b := stringSet(before["members"]), stringSet(after["members"])
	var changes []string
	for _, m := range slices.Sorted(maps.Keys(a)) {
		if !b[m] {
			changes = append(changes, "-"+m)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(b)) {
		if !a[m] {
			changes = append(changes, "+"+m)
		}
	}
	if len(changes) == 0 || role == "" {
		return nil
	}
	return []string{fmt.Sprintf("binding %s: %s", role, strings.Join(changes, " "))}
}

// stringSet is the set of strings in a list value; nothing for another
// shape.
func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	if l, ok := resources.Canon(v).([]any); ok {
		for _, e := range l {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}
