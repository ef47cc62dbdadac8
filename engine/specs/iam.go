package specs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/schemas"
)

// iamClaim is what one resource writes of an IAM policy, as far as its
// inputs tell.
type iamClaim struct {
	r      *Resource
	grant  schemas.IAMGrant
	object string // the object kind and its canonical key values
	role   string
	member string
	cond   string // resources.Key of the condition; "null" for none
}

// The rule: resources that would fight over one IAM policy (types with an
// x-iam annotation, see schemas.IAMGrant) are refused, as the GCP
// provider's documentation forbids them: a whole policy together with
// anything else writing the same policy; a binding together with a member
// of its role, whatever their conditions (the documentation allows the two
// only on different roles); two bindings of one role under the same
// condition (each is authoritative for it); and the same member declared
// twice. Each would undo the other on every apply, every apply would exit
// 0 and drift would never clear. The error is at the resource declared
// last, naming the first one it fights with.
//
// Load checks what its inputs tell offline: literals, config values and
// ${pulumi.stack} or ${pulumi.project}, alone or interpolated
// (checkIAMConflicts). What only the plan knows (an output of another
// resource, a lookup's result) is checked once planned (IAMCheck).

// checkIAMConflicts refuses, at load, resources that fight over one IAM
// policy as far as their inputs tell offline.
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
		if c, ok := claimOf(r, g, l.offlineInput(r)); ok {
			claims = append(claims, c)
		}
	}
	l.diags = append(l.diags, iamConflicts(claims)...)
}

// offlineInput returns what r's input field is as far as it is known
// offline: a literal, or a string made of literals, config values and the
// project and stack names; false otherwise, and for a secret.
func (l *loader) offlineInput(r *Resource) func(field string) (any, bool) {
	return func(field string) (any, bool) {
		en := r.Properties.Get(field)
		if en == nil {
			return nil, true // not set
		}
		if s, ok := l.offlineString(en.Value); ok {
			return s, true
		}
		v, dyn := staticValue(en.Value)
		return v, len(dyn) == 0
	}
}

// offlineString returns the string e evaluates to offline, if it is one.
func (l *loader) offlineString(e Expr) (string, bool) {
	switch x := e.(type) {
	case *Lit:
		s, ok := x.Value.(string)
		return s, ok
	case *Ref:
		return l.offlineRef(x)
	case *Template:
		var b strings.Builder
		for _, p := range x.Parts {
			if p.Ref == nil {
				b.WriteString(p.Text)
				continue
			}
			s, ok := l.offlineRef(p.Ref)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	return "", false
}

// offlineRef returns the string a reference to a config value, or to the
// project or stack name, reads; false for anything else, and for a secret
// or a value not known until plan.
func (l *loader) offlineRef(r *Ref) (string, bool) {
	if r.Root == BuiltinRoot {
		if len(r.Path) != 1 || r.Path[0].IsIndex {
			return "", false
		}
		switch r.Path[0].Key {
		case "stack":
			return l.spec.Stack, l.spec.Stack != ""
		case "project":
			return l.spec.Project, l.spec.Project != ""
		}
		return "", false
	}
	if _, ok := l.spec.Config[r.Root]; !ok || len(r.Path) != 0 {
		return "", false
	}
	s, ok := l.spec.Values[r.Root].(string)
	return s, ok
}

// IAMCheck collects the IAM claims of resources as they are planned, for
// what Load could not tell offline; see Conflicts. It is safe for
// concurrent use.
type IAMCheck struct {
	mu     sync.Mutex
	claims []iamClaim
}

// Add records what r writes of an IAM policy, from its inputs as planned:
// known values only (an unknown or secret input leaves the resource out).
// It does nothing for a type that writes no IAM policy.
func (c *IAMCheck) Add(r *Resource, inputs map[string]any) {
	if r.Schema == nil {
		return
	}
	g, ok := r.Schema.IAM()
	if !ok {
		return
	}
	cl, ok := claimOf(r, g, func(field string) (any, bool) {
		v, set := inputs[field]
		if !set {
			return nil, true
		}
		return v, !value.ContainsUnknown(v) && !value.ContainsSecret(v)
	})
	if !ok {
		return
	}
	c.mu.Lock()
	c.claims = append(c.claims, cl)
	c.mu.Unlock()
}

// Conflicts returns an error for each resource added that fights over an
// IAM policy with another added before it in the specs.
func (c *IAMCheck) Conflicts() diag.Diagnostics {
	c.mu.Lock()
	defer c.mu.Unlock()
	return iamConflicts(c.claims)
}

// claimOf reads a resource's claim from its inputs as input tells them;
// false when an input it needs is not known, or not a string.
func claimOf(r *Resource, g schemas.IAMGrant, input func(field string) (any, bool)) (iamClaim, bool) {
	str := func(k string) (string, bool) {
		v, ok := input(k)
		s, isStr := v.(string)
		return s, ok && isStr && s != ""
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
	cond, known := input("condition")
	if !known {
		return iamClaim{}, false
	}
	if cond != nil {
		m, isMap := cond.(map[string]any)
		if !isMap {
			return iamClaim{}, false
		}
		norm := map[string]any{}
		for _, k := range []string{"title", "expression", "description"} {
			s, isStr := m[k].(string)
			if v, present := m[k]; present && v != nil && !isStr {
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

// iamConflicts returns an error at each claim that fights with one
// declared before it, naming the first such: see the rule above. It
// indexes the claims by object, role and member, so that it takes time in
// proportion to their number.
func iamConflicts(claims []iamClaim) diag.Diagnostics {
	claims = slices.Clone(claims)
	slices.SortFunc(claims, func(a, b iamClaim) int { return comparePos(a.r.Pos, b.r.Pos) })
	first := map[string]*iamClaim{} // by index key: the first claim declared
	earliest := func(keys ...string) *iamClaim {
		var e *iamClaim
		for _, k := range keys {
			if c := first[k]; c != nil && (e == nil || comparePos(c.r.Pos, e.r.Pos) < 0) {
				e = c
			}
		}
		return e
	}
	var diags diag.Diagnostics
	for i := range claims {
		c := &claims[i]
		obj := "o\x00" + c.object
		policy := "p\x00" + c.object
		binding := "b\x00" + c.object + "\x00" + c.role
		bindingCond := binding + "\x00" + c.cond
		member := "m\x00" + c.object + "\x00" + c.role
		memberCond := member + "\x00" + c.member + "\x00" + c.cond
		var other *iamClaim
		switch c.grant.Grants {
		case "policy":
			other = earliest(obj)
		case "binding":
			other = earliest(policy, bindingCond, member)
		case "member":
			other = earliest(policy, binding, memberCond)
		}
		if other != nil {
			d := diag.Errorf(c.r.Pos, "resource %q (%s) and resource %q (%s) %s", c.r.Name, c.r.Type, other.r.Name, other.r.Type, iamConflict(*other, *c))
			d.Detail = fmt.Sprintf("%s is declared at %s; they would undo each other's changes on every apply. "+
				"A policy resource owns the whole policy: declare its bindings in its policyData instead. "+
				"A binding owns its role: list the member among its members instead.", other.r.Name, other.r.Pos)
			diags = append(diags, d)
		}
		keys := []string{obj}
		switch c.grant.Grants {
		case "policy":
			keys = append(keys, policy)
		case "binding":
			keys = append(keys, binding, bindingCond)
		case "member":
			keys = append(keys, member, memberCond)
		}
		for _, k := range keys {
			if first[k] == nil {
				first[k] = c
			}
		}
	}
	return diags
}

// iamConflict says why two claims that fight do.
func iamConflict(a, b iamClaim) string {
	what := describeObject(a)
	switch {
	case a.grant.Grants == "policy" || b.grant.Grants == "policy":
		return "both write the IAM policy of " + what + ", which a policy resource owns whole"
	case a.grant.Grants == "binding" && b.grant.Grants == "binding":
		return fmt.Sprintf("are both the binding of role %s in the IAM policy of %s", a.role, what)
	case a.grant.Grants == "member" && b.grant.Grants == "member":
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
