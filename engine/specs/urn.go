package specs

import "strings"

// URNField is the field of every resource that reads its URN, ${res.urn}.
const URNField = "urn"

// URN returns the URN Pulumi gives the resource name in this stack and
// project: urn:pulumi:STACK::PROJECT::QUALIFIED_TYPE::NAME, where NAME is
// the resource's logical name (its name: key, or its own name) and the
// qualified type is its Pulumi type token after the qualified type of its
// parent, if it has one, joined by "$". It is "" for a name that declares
// no resource.
func (s *Spec) URN(name string) string {
	r, ok := s.Resources[name]
	if !ok {
		return ""
	}
	return "urn:pulumi:" + s.Stack + "::" + s.Project + "::" + s.qualifiedType(r, 0) + "::" + r.LogicalName
}

// qualifiedType is the type of r in its URN: its parents' types, outermost
// first, then its own, joined by "$". depth guards against a cycle of
// parents, which the loader refuses.
func (s *Spec) qualifiedType(r *Resource, depth int) string {
	t := r.Type
	if r.Schema != nil {
		t = r.Schema.PulumiToken()
	}
	if r.Options.Parent == nil || depth > len(s.Resources) {
		return t
	}
	p, ok := s.Resources[r.Options.Parent.Root]
	if !ok {
		return t
	}
	return strings.Join([]string{s.qualifiedType(p, depth+1), t}, "$")
}
