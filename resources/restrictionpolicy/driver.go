package restrictionpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
)

// Driver manages datadog:RestrictionPolicy objects. Its id is the
// restricted resource's id, "<type>:<id>". Attributes:
//
//	resourceId  string   the restricted resource, "<type>:<id>"
//	bindings    []any    of map{"relation": string, "principals": []any of string}
//	id          string   output: data.id of the API's answer (= resourceId)
type Driver struct {
	c *Client
}

var (
	_ resources.Driver     = (*Driver)(nil)
	_ resources.Normalizer = (*Driver)(nil)
	_ resources.Recoverer  = (*Driver)(nil)
	_ resources.NaturalID  = (*Driver)(nil)
)

// Type tokens this package serves, as the schemas name them.
const (
	// Token is the type of the policies Driver manages.
	Token = "datadog:RestrictionPolicy"
	// CurrentUserToken is the lookup CurrentUser serves.
	CurrentUserToken = "datadog:getCurrentUser"
)

// New returns a driver calling the Datadog API described by cfg.
func New(cfg Config) *Driver {
	return &Driver{c: NewClient(cfg)}
}

// Read returns the live policy of the resource id, bindings in canonical
// order (see Normalize). A resource without bindings has no policy: Read
// then returns an error matching resources.ErrNotFound. The API cannot tell
// a policy with no bindings from no policy (it answers 200 with "bindings":
// [] for any resource), and a policy deleted by someone else reads so: the
// engine reports it deleted outside. A 404, which the API does not
// document, maps to resources.ErrNotFound too.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	p, err := d.c.GetRestrictionPolicy(ctx, id)
	if isNotFound(err) {
		err = fmt.Errorf("%w: %w", resources.ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Bindings) == 0 {
		return nil, fmt.Errorf("%w: the resource has no bindings, so no restriction policy", resources.ErrNotFound)
	}
	return attrsOf(p), nil
}

// Create writes the policy, unless the resource has one already. The API's
// POST is an upsert that would silently replace a policy made in the UI or
// by another stack, so Create reads first: if the resource has bindings,
// it returns a *resources.ExistsError and writes nothing. (Someone writing
// a policy between the read and the POST is not detected: the API offers
// no conditional write.) Otherwise it writes the policy with one POST.
//
// Errors say what was made: bad inputs, bad configuration, a failed read
// (the POST was then never sent) and a POST the API refused (4xx but 408,
// 409 and 429) match resources.ErrRefused; other failures of the POST
// (5xx, connection lost, throttled past the deadline) leave the outcome
// unknown, for Recover to resolve.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	rid, bindings, err := d.parseInputs(want)
	if err != nil {
		return "", nil, err
	}
	cur, err := d.c.GetRestrictionPolicy(ctx, rid)
	if err != nil {
		return "", nil, resources.Refused(fmt.Errorf("read the current policy: %w", err))
	}
	if len(cur.Bindings) > 0 {
		// The engine says what to do about it (adopt it, or declare
		// another object).
		return "", nil, &resources.ExistsError{Type: Token, ID: rid}
	}
	p, err := d.c.UpdateRestrictionPolicy(ctx, rid, bindings)
	if err != nil {
		return "", nil, refusal(selfLockoutHint(err))
	}
	return p.ResourceID, attrsOf(p), nil
}

// selfLockoutHint adds what to do to the API's refusal of bindings that
// would lower the caller's own access to the resource ("users cannot
// decrease their own level of access"). Datadog lets admins through with
// allow_self_lockout=true; reconcile never sends it, as Datadog's
// Terraform and Pulumi providers do not, so that an apply cannot take
// away the access of the key that manages the policy.
func selfLockoutHint(err error) error {
	var ae *resources.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Message, "cannot decrease their own level of access") {
		return err
	}
	return fmt.Errorf("%w; Datadog refuses bindings that lower the access of the user whose application key (DD_APP_KEY) makes the call: "+
		"name that user (user:ID), one of its roles or teams, or its org (org:ORG_ID) among the principals of the relation it has now "+
		"(editor for most resource types; datadog:getCurrentUser gives id and orgId)", err)
}

// refusal marks err with resources.Refused when it is the API's refusal of
// the request.
func refusal(err error) error {
	var ae *resources.APIError
	if errors.As(err, &ae) && resources.RefusalStatus(ae.Status) {
		return resources.Refused(err)
	}
	return err
}

// Recover finds the policy an interrupted Create wrote. A policy's id is
// its resource's id (req.Want's resourceId), a natural id that the create
// sets, so Recover reads the policy there. No policy means the create made
// nothing: Recover returns no id and no error. A policy with the bindings
// of req.Want (compared as sets, after Normalize) is the create's, and is
// adopted. A policy with other bindings is not what the create would have
// written: someone else's, written before or after it. Recover does not
// adopt it, and returns an error saying it cannot tell. It needs resourceId
// in clear.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if slices.Contains(req.Hidden, "resourceId") {
		return "", nil, errors.New("cannot look up the policy: its resourceId was secret, and state keeps no secret value")
	}
	rid, _ := req.Want["resourceId"].(string)
	if rid == "" {
		return "", nil, errors.New("cannot look up the policy: the create had no resourceId")
	}
	if slices.Contains(req.Hidden, "bindings") {
		return "", nil, fmt.Errorf("cannot tell a policy found on %q from the create's: its bindings were secret, and state keeps no secret value", rid)
	}
	got, err := d.Read(ctx, rid)
	if errors.Is(err, resources.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	want, _ := d.Normalize(req.Want)["bindings"].([]any)
	have, _ := got["bindings"].([]any)
	if !resources.SetEqual(want, have) {
		return "", nil, fmt.Errorf("a restriction policy exists on %q with other bindings than the interrupted create would have written, "+
			"so it cannot tell whether the create made it (someone else may have written it, before or after): not adopting it; "+
			"import it to manage it here, or delete it and apply again", rid)
	}
	return rid, got, nil
}

// Update replaces the bindings in place with one POST carrying the full
// desired set, never a delete followed by a create, which would leave the
// resource unrestricted in between. A changed resourceId cannot be updated
// (it forces a replacement, declared in the schema): Update reports it as an
// AttrError, as it does an empty binding set (which would delete the
// policy).
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	rid, bindings, err := d.parseInputs(want)
	if err != nil {
		return nil, err
	}
	if rid != id {
		return nil, &resources.AttrError{Path: []string{"resourceId"},
			Err: fmt.Errorf("changing %q to %q needs a replacement, not an update", id, rid)}
	}
	p, err := d.c.UpdateRestrictionPolicy(ctx, id, bindings)
	if err != nil {
		return nil, selfLockoutHint(err)
	}
	return attrsOf(p), nil
}

// IDFor returns the id of the policy want makes: its resourceId, which a
// policy is known by.
func (d *Driver) IDFor(want resources.Attrs) (string, bool) {
	rid, ok := want["resourceId"].(string)
	return rid, ok && rid != ""
}

// Delete removes the policy; the resource reverts to unrestricted access.
// The API answers 204 even when no policy existed, and a 404 is tolerated.
func (d *Driver) Delete(ctx context.Context, id string) error {
	if err := d.c.DeleteRestrictionPolicy(ctx, id); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// Normalize returns want in canonical form: the principals of each binding
// are sorted, and bindings are sorted by relation, then principals.
// Duplicate relations are not merged (the API does not document merging
// them), so two bindings stay two. Bindings compare as sets, and Read
// returns the same canonical order. Missing bindings stay missing (a policy
// needs some: see Create). Inputs that are not well-formed are returned
// unchanged, for Create to report.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	out := make(resources.Attrs, len(want))
	for k, v := range want {
		out[k] = v
	}
	if want["bindings"] == nil {
		return out
	}
	if list, ok := want["bindings"].([]any); ok && canonicalItems(list) {
		// Only their order may differ from bindingsAttr's: sort them,
		// shared.
		if !slices.IsSortedFunc(list, compareBindings) {
			list = slices.Clone(list)
			slices.SortStableFunc(list, compareBindings)
			out["bindings"] = list
		}
		return out
	}
	bindings, err := parseBindings(want["bindings"])
	if err != nil {
		return out
	}
	out["bindings"] = bindingsAttr(bindings)
	return out
}

// canonicalItems reports whether each binding of list is what bindingsAttr
// makes of it: an object of exactly a non-empty relation and principals,
// the principals sorted non-empty strings.
func canonicalItems(list []any) bool {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 2 {
			return false
		}
		if rel, ok := m["relation"].(string); !ok || rel == "" {
			return false
		}
		ps, ok := m["principals"].([]any)
		if !ok {
			return false
		}
		for j, p := range ps {
			s, ok := p.(string)
			if !ok || s == "" || j > 0 && ps[j-1].(string) > s {
				return false
			}
		}
	}
	return true
}

// compareBindings orders two bindings that canonicalItems accepts as
// bindingsAttr orders them: by relation, then by principals.
func compareBindings(a, b any) int {
	x, y := a.(map[string]any), b.(map[string]any)
	if c := strings.Compare(x["relation"].(string), y["relation"].(string)); c != 0 {
		return c
	}
	return comparePrincipals(x["principals"].([]any), y["principals"].([]any))
}

// comparePrincipals compares two lists of principals (strings) as
// slices.Compare compares []string.
func comparePrincipals(a, b []any) int {
	return slices.CompareFunc(a, b, func(x, y any) int { return strings.Compare(x.(string), y.(string)) })
}

// attrsOf returns the attributes of a policy, bindings in canonical order.
func attrsOf(p Policy) resources.Attrs {
	return resources.Attrs{
		"id":         p.ResourceID,
		"resourceId": p.ResourceID,
		"bindings":   bindingsAttr(p.Bindings),
	}
}

// bindingsAttr sorts bindings canonically and returns them as an attribute
// value (never nil).
func bindingsAttr(bs []Binding) []any {
	sorted := make([]Binding, len(bs))
	for i, b := range bs {
		sorted[i] = Binding{Relation: b.Relation, Principals: slices.Sorted(slices.Values(b.Principals))}
	}
	slices.SortStableFunc(sorted, func(a, b Binding) int {
		if c := strings.Compare(a.Relation, b.Relation); c != 0 {
			return c
		}
		return slices.Compare(a.Principals, b.Principals)
	})
	out := make([]any, len(sorted))
	for i, b := range sorted {
		ps := make([]any, len(b.Principals))
		for j, p := range b.Principals {
			ps[j] = p
		}
		out[i] = map[string]any{"relation": b.Relation, "principals": ps}
	}
	return out
}

// parseInputs checks and extracts resourceId and bindings, of which there
// must be at least one: the API cannot tell a policy without bindings from
// no policy. Relations the resource type lacks are refused as CheckInputs
// refuses them (a value known only at apply was not checked at plan).
func (d *Driver) parseInputs(want resources.Attrs) (string, []Binding, error) {
	rid, bindings, err := parseInputs(want)
	if err == nil {
		err = d.CheckInputs(want)
	}
	return rid, bindings, err
}

// parseInputs checks and extracts resourceId and bindings, as the method
// does, without the check of the relations.
func parseInputs(want resources.Attrs) (string, []Binding, error) {
	rid, ok := want["resourceId"].(string)
	if !ok || rid == "" {
		return "", nil, &resources.AttrError{Path: []string{"resourceId"}, Err: errors.New("required: a string \"<type>:<id>\"")}
	}
	if typ, id, ok := strings.Cut(rid, ":"); !ok || typ == "" || id == "" {
		return "", nil, &resources.AttrError{Path: []string{"resourceId"}, Err: fmt.Errorf("%q is not \"<type>:<id>\"", rid)}
	}
	bindings, err := parseBindings(want["bindings"])
	if err == nil && len(bindings) == 0 {
		err = &resources.AttrError{Path: []string{"bindings"},
			Err: errors.New("a restriction policy needs at least one binding (a policy without bindings is no policy: remove the resource to lift the restriction)")}
	}
	return rid, bindings, err
}

// parseBindings reads the bindings attribute; nil means no bindings.
func parseBindings(v any) ([]Binding, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &resources.AttrError{Path: []string{"bindings"}, Err: fmt.Errorf("must be a list, not %T", v)}
	}
	out := make([]Binding, 0, len(list))
	for i, e := range list {
		at := func(field string, err error) error {
			path := []string{"bindings", fmt.Sprint(i)}
			if field != "" {
				path = append(path, field)
			}
			return &resources.AttrError{Path: path, Err: err}
		}
		m, ok := e.(map[string]any)
		if !ok {
			return nil, at("", fmt.Errorf("must be an object with relation and principals, not %T", e))
		}
		rel, ok := m["relation"].(string)
		if !ok || rel == "" {
			return nil, at("relation", errors.New("required: a non-empty string"))
		}
		b := Binding{Relation: rel, Principals: []string{}}
		var ps []any
		switch p := m["principals"].(type) {
		case nil:
			return nil, at("principals", errors.New("required: a list of \"<type>:<id>\" strings"))
		case []any:
			ps = p
		case []string:
			ps = resources.Canon(p).([]any)
		default:
			return nil, at("principals", fmt.Errorf("must be a list of strings, not %T", p))
		}
		for j, p := range ps {
			s, ok := p.(string)
			if !ok || s == "" {
				return nil, &resources.AttrError{Path: []string{"bindings", fmt.Sprint(i), "principals", fmt.Sprint(j)},
					Err: errors.New("must be a non-empty string \"<type>:<id>\"")}
			}
			b.Principals = append(b.Principals, s)
		}
		out = append(out, b)
	}
	return out, nil
}
