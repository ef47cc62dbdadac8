package restrictionpolicy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"reconcile/resources"
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
)

// New returns a driver calling the Datadog API described by cfg.
func New(cfg Config) *Driver {
	return &Driver{c: NewClient(cfg)}
}

// Read returns the live policy of the resource id. A resource without a
// policy (never set, or deleted by someone else) reads as bindings [],
// never as resources.ErrNotFound: the API answers 200 with no bindings
// either way, and an empty list lets the engine report the drift truthfully
// ("bindings: [...] → []"), which the Terraform provider cannot. Bindings
// come back in canonical order (see Normalize). A 404, which the API does
// not document, maps to resources.ErrNotFound.
func (d *Driver) Read(ctx context.Context, id string) (resources.Attrs, error) {
	p, err := d.c.GetRestrictionPolicy(ctx, id)
	if err != nil {
		return nil, wrap("read", id, err)
	}
	return attrsOf(p), nil
}

// Create writes the policy with one POST. POST is an upsert: if the
// resource already has a policy, it is replaced by the desired one rather
// than refused, which is how Datadog behaves and what a user declaring the
// policy wants.
func (d *Driver) Create(ctx context.Context, want resources.Attrs) (string, resources.Attrs, error) {
	rid, bindings, err := parseInputs(want)
	if err != nil {
		return "", nil, err
	}
	p, err := d.c.UpdateRestrictionPolicy(ctx, rid, bindings)
	if err != nil {
		return "", nil, wrap("create", rid, err)
	}
	return p.ResourceID, attrsOf(p), nil
}

// Recover finds the policy an interrupted Create wrote. A policy's id is
// its resource's id (req.Want's resourceId), a natural id that the create
// sets, so Recover reads the policy there: bindings mean the POST went
// through (or the resource already had a policy, which the create would
// have replaced: adopting it, the next plan shows the difference); none
// mean it made nothing. It needs resourceId in clear.
func (d *Driver) Recover(ctx context.Context, req resources.RecoverRequest) (string, resources.Attrs, error) {
	if slices.Contains(req.Hidden, "resourceId") {
		return "", nil, errors.New("restrictionpolicy: cannot look up the policy: its resourceId was secret, and state keeps no secret value")
	}
	rid, _ := req.Want["resourceId"].(string)
	if rid == "" {
		return "", nil, errors.New("restrictionpolicy: cannot look up the policy: the create had no resourceId")
	}
	got, err := d.Read(ctx, rid)
	if errors.Is(err, resources.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if bs, _ := got["bindings"].([]any); len(bs) == 0 {
		return "", nil, nil
	}
	return rid, got, nil
}

// Update replaces the bindings in place with one POST carrying the full
// desired set, never a delete followed by a create, which would leave the
// resource unrestricted in between. A changed resourceId cannot be updated
// (it forces a replacement, declared in the schema): Update reports it as an
// AttrError.
func (d *Driver) Update(ctx context.Context, id string, prior, want resources.Attrs) (resources.Attrs, error) {
	rid, bindings, err := parseInputs(want)
	if err != nil {
		return nil, err
	}
	if rid != id {
		return nil, &resources.AttrError{Path: []string{"resourceId"},
			Err: fmt.Errorf("changing %q to %q needs a replacement, not an update", id, rid)}
	}
	p, err := d.c.UpdateRestrictionPolicy(ctx, id, bindings)
	if err != nil {
		return nil, wrap("update", id, err)
	}
	return attrsOf(p), nil
}

// Delete removes the policy; the resource reverts to unrestricted access.
// The API answers 204 even when no policy existed, and a 404 is tolerated.
func (d *Driver) Delete(ctx context.Context, id string) error {
	if err := d.c.DeleteRestrictionPolicy(ctx, id); err != nil && !isNotFound(err) {
		return wrap("delete", id, err)
	}
	return nil
}

// Normalize returns want in canonical form: missing bindings become [],
// the principals of each binding are sorted, and bindings are sorted by
// relation, then principals. Duplicate relations are not merged (the API
// does not document merging them), so two bindings stay two. Bindings
// compare as sets, and Read returns the same canonical order. Inputs that
// are not well-formed are returned unchanged, for Create to report.
func (d *Driver) Normalize(want resources.Attrs) resources.Attrs {
	out := make(resources.Attrs, len(want)+1)
	for k, v := range want {
		out[k] = v
	}
	bindings, err := parseBindings(want["bindings"])
	if err != nil {
		return out
	}
	out["bindings"] = bindingsAttr(bindings)
	return out
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

// parseInputs checks and extracts resourceId and bindings.
func parseInputs(want resources.Attrs) (string, []Binding, error) {
	rid, ok := want["resourceId"].(string)
	if !ok || rid == "" {
		return "", nil, &resources.AttrError{Path: []string{"resourceId"}, Err: errors.New("required: a string \"<type>:<id>\"")}
	}
	if typ, id, ok := strings.Cut(rid, ":"); !ok || typ == "" || id == "" {
		return "", nil, &resources.AttrError{Path: []string{"resourceId"}, Err: fmt.Errorf("%q is not \"<type>:<id>\"", rid)}
	}
	bindings, err := parseBindings(want["bindings"])
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

func wrap(op, id string, err error) error {
	return fmt.Errorf("restrictionpolicy: %s %q: %w", op, id, err)
}
