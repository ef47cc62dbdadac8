package endpointsiam

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// MemberDriver manages gcp:endpoints:ServiceIamMember and
// gcp:endpoints:ConsumersIamMember: one member granted one role (under one
// condition). It is not authoritative: the role's other members, and the
// other roles, are left alone. Its id is the provider's import id,
// "RESOURCE ROLE MEMBER" or, with a condition, "RESOURCE ROLE MEMBER
// TITLE". Every input forces a replacement. Attributes:
//
//	serviceName, consumerProject  the target, as for PolicyDriver
//	role       string
//	member     string  e.g. "user:jane@example.com"
//	condition  map     {title, expression, description}; absent for none
//	etag       string  output: the policy's etag as last read or written
type MemberDriver struct {
	base
}

var (
	_ resources.Driver     = (*MemberDriver)(nil)
	_ resources.Normalizer = (*MemberDriver)(nil)
	_ resources.Recoverer  = (*MemberDriver)(nil)
)

// NewServiceMember returns the gcp:endpoints:ServiceIamMember driver.
func NewServiceMember(cl *Client) *MemberDriver {
	return &MemberDriver{base{cl: cl, scope: serviceScope}}
}

// NewConsumersMember returns the gcp:endpoints:ConsumersIamMember driver.
func NewConsumersMember(cl *Client) *MemberDriver {
	return &MemberDriver{base{cl: cl, scope: consumersScope}}
}

type memberInputs struct {
	t            target
	role, member string
	cond         *gcpiam.Expr
}

func (d *MemberDriver) inputs(want resources.Attrs) (memberInputs, error) {
	var in memberInputs
	var err error
	if in.t, err = d.scope.targetOf(want); err != nil {
		return in, err
	}
	if in.role, err = roleArg(want); err != nil {
		return in, err
	}
	if in.member, err = memberArg(want); err != nil {
		return in, err
	}
	in.cond, err = conditionArg(want)
	return in, err
}

func (in memberInputs) id() string {
	return iamID{target: in.t, role: in.role, member: in.member, title: titleOf(in.cond)}.String()
}

// Read returns the member the id names, if the role's binding (under the
// condition of the id's title, or without one) holds it; otherwise
// resources.ErrNotFound, as the provider drops such a member from state.
func (d *MemberDriver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	mid, err := d.scope.parseID(id, 3)
	if err != nil {
		return nil, resources.Refused(err)
	}
	p, err := d.cl.get(ctx, mid.target)
	if err != nil {
		return nil, err
	}
	b, ok, err := findBinding(p.doc, mid.role, mid.title)
	if err != nil {
		return nil, err
	}
	if !ok || !slices.Contains(b.Members, mid.member) {
		return nil, fmt.Errorf("%w: the policy of %q does not grant %s to %s%s",
			resources.ErrNotFound, mid.resource(), mid.role, mid.member, conditionText(mid.title))
	}
	return d.attrs(mid.target, b, mid.member, p.etag), nil
}

func (d *MemberDriver) attrs(t target, b gcpiam.Binding, member, etag string) resources.Attrs {
	out := t.attrs()
	out["id"] = iamID{target: t, role: b.Role, member: member, title: titleOf(b.Condition)}.String()
	out["role"] = b.Role
	out["member"] = member
	if c := conditionAttr(b.Condition); c != nil {
		out["condition"] = c
	}
	out["etag"] = etag
	return out
}

// Create adds the member to the role's binding (under the condition),
// making the binding if there is none; a member already there is left as
// it is. Bad inputs, a failed read and a refused write match
// resources.ErrRefused; so does a condition whose title another condition
// of the role has (ids name conditions by title).
func (d *MemberDriver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	in, err := d.inputs(want)
	if err != nil {
		return "", nil, err
	}
	p, _, err := d.cl.modify(ctx, in.t, "", d.createEdit(in))
	if err != nil {
		return "", nil, err
	}
	b, ok, err := findBinding(p.doc, in.role, titleOf(in.cond))
	if err != nil || !ok || !slices.Contains(b.Members, in.member) {
		return "", nil, fmt.Errorf("the member written is not in the policy: %v", err)
	}
	return in.id(), d.attrs(in.t, b, in.member, p.etag), nil
}

// createEdit adds the member to the role's binding, unless it is there.
func (d *MemberDriver) createEdit(in memberInputs) editor {
	key := keyOf(in.role, in.cond)
	return func(doc *gcpiam.Policy) (bool, error) {
		if err := checkTitle(*doc, key); err != nil {
			return false, err
		}
		if slices.Contains(doc.Members()[key], in.member) {
			return false, nil
		}
		doc.Bindings = append(doc.Bindings, gcpiam.Binding{Role: in.role, Members: []string{in.member}, Condition: in.cond})
		*doc = doc.Canonical()
		return true, nil
	}
}

// Update changes nothing: every input forces a replacement (declared in
// the schema). An Update with the inputs of the id reads the member; any
// other is an AttrError.
func (d *MemberDriver) Update(ctx context.Context, id string, _, want resources.Attrs) (resources.Attrs, error) {
	in, err := d.inputs(want)
	if err != nil {
		return nil, err
	}
	mid, err := d.scope.parseID(id, 3)
	if err != nil || mid.String() != in.id() {
		return nil, &resources.AttrError{Path: []string{"member"}, Err: fmt.Errorf("member %q cannot become %q: %w", id, in.id(), errNoUpdate)}
	}
	return d.Read(ctx, id)
}

// Delete removes the member from the role's binding (under the condition
// of the id's title, or without one), and the binding when it was its
// last member. A member already gone is not an error.
func (d *MemberDriver) Delete(ctx context.Context, id string) error {
	mid, err := d.scope.parseID(id, 3)
	if err != nil {
		return resources.Refused(err)
	}
	_, _, err = d.cl.modify(ctx, mid.target, "", d.deleteEdit(mid))
	if err != nil {
		return err
	}
	return nil
}

// deleteEdit removes the member an id names from its role's binding, and
// the binding when it was its last member.
func (d *MemberDriver) deleteEdit(mid iamID) editor {
	return func(doc *gcpiam.Policy) (bool, error) {
		b, ok, err := findBinding(*doc, mid.role, mid.title)
		if err != nil || !ok || !slices.Contains(b.Members, mid.member) {
			return false, err
		}
		key := gcpiam.KeyOf(b)
		c := doc.Canonical()
		for i := range c.Bindings {
			if gcpiam.KeyOf(c.Bindings[i]) == key {
				c.Bindings[i].Members = slices.DeleteFunc(slices.Clone(c.Bindings[i].Members), func(m string) bool { return m == mid.member })
			}
		}
		doc.Bindings = c.Canonical().Bindings
		return true, nil
	}
}

// Normalize writes the target in canonical form and a condition without
// an empty description.
func (d *MemberDriver) Normalize(want resources.Attrs) resources.Attrs {
	out := copyAttrs(want)
	d.canonTarget(want, out)
	if c, err := conditionArg(want); err == nil && c != nil {
		out["condition"] = conditionAttr(c)
	}
	return out
}

// Recover finds what an interrupted Create wrote: the member its inputs
// name, if the policy grants it (under the same condition), is adopted;
// otherwise the create made nothing that remains, and the next plan adds
// the member again. It needs the inputs in clear.
func (d *MemberDriver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if err := hiddenInputs(req, "serviceName", "consumerProject", "role", "member", "condition"); err != nil {
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
	if !resources.Equal(got["condition"], conditionAttr(in.cond)) {
		return "", nil, nil
	}
	return in.id(), got, nil
}
