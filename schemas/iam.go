package schemas

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
)

// IAMGrant is what the x-iam annotation of a resource type says: that the
// resource writes (part of) the IAM policy of an object, and how much of
// it. Two resources of a spec that write the same policy may fight over
// it; the engine refuses such specs (see Conflicts).
//
//	"x-iam": {
//	  "object": "gcp:endpoints:service",                    the kind of object
//	  "keys": {"serviceName": "^(?:services/)?([^/]+)$"},  the inputs naming it
//	  "grants": "policy" | "binding" | "member"
//	}
//
// Each key's pattern matches the spellings of its input, and its first
// group is what names the object, so that two spellings of one object
// compare equal. A "binding" resource has the inputs role, members and
// condition; a "member" resource role, member and condition.
type IAMGrant struct {
	Object string
	Keys   []IAMKey // sorted by field
	Grants string   // "policy", "binding" or "member"
}

// IAMKey is one input that names the object.
type IAMKey struct {
	Field   string
	Pattern *regexp.Regexp
}

// Canonical returns the name of the object a value of the key names: the
// pattern's first group, or the value itself when it does not match.
func (k IAMKey) Canonical(v string) string {
	if m := k.Pattern.FindStringSubmatch(v); len(m) > 1 {
		return m[1]
	}
	return v
}

var iamGrants sync.Map // *Schema → iamResult

type iamResult struct {
	g   *IAMGrant
	err error
}

// IAM returns the schema's x-iam annotation, if it has one.
func (s *Schema) IAM() (IAMGrant, bool) {
	r := s.iam()
	if r.g == nil {
		return IAMGrant{}, false
	}
	return *r.g, true
}

func (s *Schema) iam() iamResult {
	if r, ok := iamGrants.Load(s); ok {
		return r.(iamResult)
	}
	g, err := parseIAM(s.otree)
	r, _ := iamGrants.LoadOrStore(s, iamResult{g, err})
	return r.(iamResult)
}

// parseIAM reads the x-iam annotation of a schema tree; nil when there is
// none.
func parseIAM(tree any) (*IAMGrant, error) {
	top, _ := tree.(map[string]any)
	raw, ok := top["x-iam"]
	if !ok {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("x-iam must be an object")
	}
	g := &IAMGrant{}
	g.Object, _ = m["object"].(string)
	g.Grants, _ = m["grants"].(string)
	if g.Object == "" {
		return nil, fmt.Errorf("x-iam: object must be a non-empty string")
	}
	switch g.Grants {
	case "policy", "binding", "member":
	default:
		return nil, fmt.Errorf("x-iam: grants must be policy, binding or member, not %q", g.Grants)
	}
	keys, ok := m["keys"].(map[string]any)
	if !ok || len(keys) == 0 {
		return nil, fmt.Errorf("x-iam: keys must map input names to patterns")
	}
	props, _ := top["properties"].(map[string]any)
	for field, p := range keys {
		pat, ok := p.(string)
		if !ok {
			return nil, fmt.Errorf("x-iam: the pattern of key %q must be a string", field)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("x-iam: key %q: %w", field, err)
		}
		if re.NumSubexp() < 1 {
			return nil, fmt.Errorf("x-iam: the pattern of key %q needs a group naming the object", field)
		}
		if _, ok := props[field]; !ok {
			return nil, fmt.Errorf("x-iam: key %q is not a property", field)
		}
		g.Keys = append(g.Keys, IAMKey{Field: field, Pattern: re})
	}
	sort.Slice(g.Keys, func(i, j int) bool { return g.Keys[i].Field < g.Keys[j].Field })
	want := map[string][]string{"binding": {"role", "members"}, "member": {"role", "member"}}[g.Grants]
	for _, f := range want {
		if _, ok := props[f]; !ok {
			return nil, fmt.Errorf("x-iam: a %s resource needs the property %q", g.Grants, f)
		}
	}
	return g, nil
}
