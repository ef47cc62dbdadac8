package specs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"reconcile/engine/diag"
	"reconcile/resources"
	"reconcile/schemas"
)

// iamClaim is what one resource writes of an IAM policy, as far as its
// literal inputs tell.
type iamClaim struct {
	r      *Resource
	grant  schemas.IAMGrant
	object string // the object kind and its canonical key values
	role   string
	member string
	cond   string // resources.Key of the condition; "null" for none
}

// checkIAMConflicts refuses resources that would fight over one IAM policy
// (types with an x-iam annotation, see schemas.IAMGrant), as the GCP
// provider's documentation forbids: a whole policy together with anything
// else writing the same policy; a binding together with a member of its
// role, whatever their conditions (the documentation allows the two only
// on different roles); two bindings of one role under the same condition
// (each is authoritative for it); and the same member declared twice.
// Each would undo the other on every apply. Only inputs written as literals are compared: a
// name known only at plan time cannot be checked here. The error is at the
// resource declared last, naming the other.
func (l *loader) checkIAMConflicts() {
	var claims []iamClaim
	for _, name := range sortedKeys(l.spec.Resources) {
		r := l.spec.Resources[name]
		if r.Schema == nil || r.Properties == nil || l.broken[name] {
			continue
		}
		g, ok := r.Schema.IAM()
		if !ok {
			continue
		}
		if c, ok := claimOf(r, g); ok {
			claims = append(claims, c)
		}
	}
	slices.SortFunc(claims, func(a, b iamClaim) int { return comparePos(a.r.Pos, b.r.Pos) })
	for i, later := range claims {
		for _, earlier := range claims[:i] {
			if why := iamConflict(earlier, later); why != "" {
				d := l.errorf(later.r.Pos, "resource %q (%s) and resource %q (%s) %s", later.r.Name, later.r.Type, earlier.r.Name, earlier.r.Type, why)
				d.Detail = fmt.Sprintf("%s is declared at %s; they would undo each other's changes on every apply. "+
					"A policy resource owns the whole policy: declare its bindings in its policyData instead. "+
					"A binding owns its role: list the member among its members instead.", earlier.r.Name, earlier.r.Pos)
				break
			}
		}
	}
}

// claimOf reads a resource's claim from its literal inputs; false when an
// input it needs is not a literal string.
func claimOf(r *Resource, g schemas.IAMGrant) (iamClaim, bool) {
	v, _ := staticValue(r.Properties)
	in, _ := v.(map[string]any)
	str := func(k string) (string, bool) {
		s, ok := in[k].(string)
		return s, ok && s != ""
	}
	c := iamClaim{r: r, grant: g}
	parts := []string{g.Object}
	for _, k := range g.Keys {
		s, ok := str(k.Field)
		if !ok {
			return iamClaim{}, false
		}
		parts = append(parts, k.Canonical(s))
	}
	c.object = strings.Join(parts, "\x00")
	if g.Grants == "policy" {
		return c, true
	}
	var ok bool
	if c.role, ok = str("role"); !ok {
		return iamClaim{}, false
	}
	if g.Grants == "member" {
		if c.member, ok = str("member"); !ok {
			return iamClaim{}, false
		}
	}
	cond, set := in["condition"]
	if set && cond != nil {
		m, isMap := cond.(map[string]any)
		if !isMap {
			return iamClaim{}, false
		}
		norm := map[string]any{}
		for _, k := range []string{"title", "expression", "description"} {
			s, isStr := m[k].(string)
			if _, present := m[k]; present && !isStr {
				return iamClaim{}, false // known only at plan time
			}
			if s != "" {
				norm[k] = s
			}
		}
		cond = norm
	}
	c.cond = resources.Key(cond)
	return c, true
}

// iamConflict says why two claims fight, or "" when they do not.
func iamConflict(a, b iamClaim) string {
	if a.object != b.object {
		return ""
	}
	what := describeObject(a)
	switch {
	case a.grant.Grants == "policy" || b.grant.Grants == "policy":
		return "both write the IAM policy of " + what + ", which a policy resource owns whole"
	case a.role != b.role:
		return ""
	case a.grant.Grants == "binding" && b.grant.Grants == "binding":
		if a.cond != b.cond {
			return ""
		}
		return fmt.Sprintf("are both the binding of role %s in the IAM policy of %s", a.role, what)
	case a.grant.Grants == "member" && b.grant.Grants == "member":
		if a.member != b.member || a.cond != b.cond {
			return ""
		}
		return fmt.Sprintf("both grant role %s to %s in the IAM policy of %s", a.role, a.member, what)
	}
	return fmt.Sprintf("both grant role %s in the IAM policy of %s, whose binding owns the role's members", a.role, what)
}

// describeObject names a claim's object for people: its key values.
func describeObject(c iamClaim) string {
	parts := strings.Split(c.object, "\x00")[1:]
	var out []string
	for i, k := range c.grant.Keys {
		out = append(out, fmt.Sprintf("%s %q", k.Field, parts[i]))
	}
	return strings.Join(out, ", ")
}

// comparePos orders positions by file, line and column.
func comparePos(a, b diag.Pos) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return cmp.Compare(a.Line, b.Line)
	}
	return cmp.Compare(a.Col, b.Col)
}
