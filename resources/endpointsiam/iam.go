package endpointsiam

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

// Type tokens of the IAM resources this package serves, as the schemas
// name them.
const (
	ServiceIamPolicyResourceToken   = "gcp:endpoints:ServiceIamPolicy"
	ServiceIamBindingToken          = "gcp:endpoints:ServiceIamBinding"
	ServiceIamMemberToken           = "gcp:endpoints:ServiceIamMember"
	ConsumersIamPolicyResourceToken = "gcp:endpoints:ConsumersIamPolicy"
	ConsumersIamBindingToken        = "gcp:endpoints:ConsumersIamBinding"
	ConsumersIamMemberToken         = "gcp:endpoints:ConsumersIamMember"
)

// base is what the three IAM drivers share.
type base struct {
	cl    *Client
	scope scope
}

// canonTarget writes the canonical spelling of the target into out, when
// in names one well.
func (b base) canonTarget(in, out resources.Attrs) {
	if t, err := b.scope.targetOf(in); err == nil {
		for k, v := range t.attrs() {
			out[k] = v
		}
	}
}

// copyAttrs returns a shallow copy of a.
func copyAttrs(a resources.Attrs) resources.Attrs {
	out := make(resources.Attrs, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// roleArg reads the role input.
func roleArg(in resources.Attrs) (string, error) {
	return stringArg(in, "role")
}

// conditionArg reads the optional condition input.
func conditionArg(in resources.Attrs) (*gcpiam.Expr, error) {
	return gcpiam.ParseCondition(in["condition"], []string{"condition"})
}

// conditionAttr is a condition as an attribute: title, expression, and
// description when there is one; nil for none.
func conditionAttr(c *gcpiam.Expr) any {
	if c == nil {
		return nil
	}
	m := map[string]any{"title": c.Title, "expression": c.Expression}
	if c.Description != "" {
		m["description"] = c.Description
	}
	return m
}

// membersArg reads the members input, a non-empty set of IAM members,
// sorted and without repeats.
func membersArg(in resources.Attrs) ([]string, error) {
	v, ok := in["members"]
	if !ok || v == nil {
		return nil, &resources.AttrError{Path: []string{"members"}, Err: errors.New("required")}
	}
	l, ok := resources.Canon(v).([]any)
	if !ok {
		return nil, &resources.AttrError{Path: []string{"members"}, Err: fmt.Errorf("must be a list of strings, not %T", v)}
	}
	var out []string
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, &resources.AttrError{Path: []string{"members", strconv.Itoa(i)}, Err: fmt.Errorf("must be a string, not %T", e)}
		}
		if err := gcpiam.CheckMember(s); err != nil {
			return nil, &resources.AttrError{Path: []string{"members", strconv.Itoa(i)}, Err: err}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, &resources.AttrError{Path: []string{"members"}, Err: errors.New("needs at least one member (a binding without members is no binding: remove the resource to revoke the role)")}
	}
	return slices.Compact(slices.Sorted(slices.Values(out))), nil
}

// memberArg reads the member input.
func memberArg(in resources.Attrs) (string, error) {
	m, err := stringArg(in, "member")
	if err != nil {
		return "", err
	}
	if err := gcpiam.CheckMember(m); err != nil {
		return "", &resources.AttrError{Path: []string{"member"}, Err: err}
	}
	return m, nil
}

// keyOf is the key of the binding of role under cond.
func keyOf(role string, cond *gcpiam.Expr) gcpiam.Key {
	return gcpiam.KeyOf(gcpiam.Binding{Role: role, Condition: cond})
}

// titleOf is the title of a condition, "" for none.
func titleOf(c *gcpiam.Expr) string {
	if c == nil {
		return ""
	}
	return c.Title
}

// findBinding returns the binding of doc (in canonical form) that an id
// names: of role, without a condition when title is "", else with the
// condition of that title. Several conditions of one title are an error
// matching errAmbiguous.
func findBinding(doc gcpiam.Policy, role, title string) (gcpiam.Binding, bool, error) {
	var found []gcpiam.Binding
	for _, b := range doc.Canonical().Bindings {
		if b.Role == role && titleOf(b.Condition) == title && (title != "" || b.Condition == nil) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		return gcpiam.Binding{}, false, nil
	case 1:
		return found[0], true, nil
	}
	return gcpiam.Binding{}, false, fmt.Errorf("%w: role %s has %d bindings whose condition is titled %q", errAmbiguous, role, len(found), title)
}

// checkTitle refuses to write the binding of key when doc holds another
// binding of its role whose condition has the same title: ids name a
// condition by its title, so the two could not be told apart.
func checkTitle(doc gcpiam.Policy, key gcpiam.Key) error {
	if !key.Conditional() {
		return nil
	}
	for _, b := range doc.Canonical().Bindings {
		if k := gcpiam.KeyOf(b); k.Role == key.Role && k.Title == key.Title && k != key {
			return resources.Refused(fmt.Errorf("role %s has another binding whose condition is titled %q (expression %q): "+
				"ids name a condition by its title, so give this condition another title; to change a condition and keep its title, set options.deleteBeforeReplace",
				key.Role, key.Title, k.Expression))
		}
	}
	return nil
}

// hiddenInputs returns an error when the interrupted create's inputs hold
// a secret among names: state keeps no secret value, so what the create
// wrote cannot be told.
func hiddenInputs(req resources.RecoverRequest, names ...string) error {
	for _, n := range names {
		if slices.Contains(req.Hidden, n) {
			return fmt.Errorf("cannot tell what the interrupted create wrote: its %s was secret, and state keeps no secret value", n)
		}
	}
	return nil
}
