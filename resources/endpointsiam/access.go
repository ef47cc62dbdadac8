package endpointsiam

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/gcpiam"
)

var (
	_ resources.AccessReviewer  = (*PolicyDriver)(nil)
	_ resources.AccessReviewer  = (*BindingDriver)(nil)
	_ resources.AccessReviewer  = (*MemberDriver)(nil)
	_ resources.AccessDescriber = (*PolicyDriver)(nil)
	_ resources.AccessDescriber = (*BindingDriver)(nil)
	_ resources.AccessDescriber = (*ServiceIamPolicy)(nil)
	_ resources.AccessDescriber = (*ConsumersIamPolicy)(nil)
)

// editor is what a write does to a policy document, as modify applies it:
// it edits the document read and reports whether it changed anything.
type editor func(*gcpiam.Policy) (bool, error)

// review reads the policy of t and returns what edit would change of it,
// member by member, and which of the caller's own memberships it would
// remove. It writes nothing. The caller is asked for only when the edit
// removes members; when it cannot be told, review fails with a refusal
// (as guard refuses the write) unless allow is set (then it finds no
// lockout).
func (cl *Client) review(ctx context.Context, t target, edit editor, allow bool) (resources.AccessReview, error) {
	cur, err := cl.get(ctx, t)
	if err != nil {
		return resources.AccessReview{}, err
	}
	after := cur.doc
	after.Bindings = slices.Clone(after.Bindings)
	changed, err := edit(&after)
	if err != nil || !changed {
		return resources.AccessReview{}, err
	}
	out := resources.AccessReview{Changes: accessChanges(t.resource(), cur.doc, after)}
	if !slices.ContainsFunc(out.Changes, func(c resources.AccessChange) bool { return !c.Added }) {
		return out, nil
	}
	caller, err := cl.Caller(ctx)
	if err != nil {
		if allow {
			return out, nil
		}
		// The apply refuses the write for it (guard): so does the plan.
		return resources.AccessReview{}, resources.Refused(fmt.Errorf("the write removes members of the IAM policy of %q, and who reconcile calls Google as, whose own access it must not remove, cannot be told: %w "+
			"(--allow-self-lockout goes on without this check)", t.resource(), err))
	}
	out.Lockouts = lockouts(t.resource(), caller, cur.doc, after)
	return out, nil
}

// guard refuses, before it is sent, a write of after over before that
// would remove one of the caller's own memberships, when ctx asks for it
// (resources.SelfLockoutGuard). The refusal matches resources.ErrRefused:
// nothing was written.
func (cl *Client) guard(ctx context.Context, t target, before, after gcpiam.Policy) error {
	if !resources.SelfLockoutGuard(ctx) {
		return nil
	}
	if !slices.ContainsFunc(accessChanges(t.resource(), before, after), func(c resources.AccessChange) bool { return !c.Added }) {
		return nil
	}
	caller, err := cl.Caller(ctx)
	if err != nil {
		return resources.Refused(fmt.Errorf("the write removes members of the IAM policy of %q, and who reconcile calls Google as, whose own access it must not remove, cannot be told: %w; "+
			"nothing was written (plan and apply with --allow-self-lockout to write without this check)", t.resource(), err))
	}
	lo := lockouts(t.resource(), caller, before, after)
	if len(lo) == 0 {
		return nil
	}
	return resources.Refused(fmt.Errorf("the write would remove the caller's own access to %q, as the policy is now: %s; nothing was written. %s, "+
		"or plan again with --allow-self-lockout if the caller is meant to lose it", t.resource(), describeLockouts(lo), lo[0].Keep))
}

// describeLockouts says which roles the caller loses, and through which
// members it has them now.
func describeLockouts(lo []resources.Lockout) string {
	parts := make([]string, len(lo))
	for i, l := range lo {
		parts[i] = fmt.Sprintf("%s has %s through %s", l.Caller, l.Role, l.Member)
	}
	return strings.Join(parts, "; ")
}

// accessChanges lists, binding by binding (role and condition), the
// members after has that before has not (added) and the other way round
// (removed), sorted by resources.SortAccessChanges.
func accessChanges(resource string, before, after gcpiam.Policy) []resources.AccessChange {
	b, a := before.Members(), after.Members()
	keys := slices.Collect(maps.Keys(b))
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []resources.AccessChange
	for _, k := range keys {
		for _, m := range b[k] {
			if !slices.Contains(a[k], m) {
				out = append(out, resources.AccessChange{Resource: resource, Role: k.Role, Condition: k.Title, Member: m})
			}
		}
		for _, m := range a[k] {
			if !slices.Contains(b[k], m) {
				out = append(out, resources.AccessChange{Resource: resource, Role: k.Role, Condition: k.Title, Member: m, Added: true})
			}
		}
	}
	resources.SortAccessChanges(out)
	return out
}

// lockouts returns the roles of before that caller (an email, as Caller
// returns it) is known to have, through a member that names it (see
// namesCaller), and that after grants to no member that names it or may
// hold it (a group, a principal set), sorted by role. Members count per
// role whatever the conditions of their bindings.
func lockouts(resource, caller string, before, after gcpiam.Policy) []resources.Lockout {
	had, kept := map[string]string{}, map[string]bool{}
	for _, b := range before.Canonical().Bindings {
		for _, m := range b.Members {
			if _, ok := had[b.Role]; !ok && namesCaller(m, caller) {
				had[b.Role] = m
			}
		}
	}
	for _, b := range after.Canonical().Bindings {
		for _, m := range b.Members {
			if namesCaller(m, caller) || mayHoldCaller(m) {
				kept[b.Role] = true
			}
		}
	}
	var out []resources.Lockout
	for _, role := range slices.Sorted(maps.Keys(had)) {
		if kept[role] {
			continue
		}
		out = append(out, resources.Lockout{Resource: resource, Role: role, Caller: caller, Member: had[role],
			Keep: fmt.Sprintf("To keep it, grant %s to %s (or to a group it is in)", role, callerMember(caller))})
	}
	return out
}

// namesCaller reports whether the IAM member m is known to include the
// caller, an email: the caller itself as a user or a service account
// (emails compare without case), the Google Workspace domain of a user
// caller, or everyone (allUsers, allAuthenticatedUsers). Groups and
// principal sets are not: whom they hold cannot be told from the policy.
func namesCaller(m, caller string) bool {
	kind, id, _ := strings.Cut(m, ":")
	_, domain, isEmail := strings.Cut(caller, "@")
	switch {
	case m == "allUsers" || m == "allAuthenticatedUsers":
		return true
	case !isEmail:
		return false
	case kind == "user" || kind == "serviceAccount":
		return strings.EqualFold(id, caller)
	case kind == "domain":
		return !isServiceAccount(caller) && strings.EqualFold(id, domain)
	}
	return false
}

// mayHoldCaller reports whether the IAM member m may include the caller
// without the policy saying so: a group, or a principal set of a
// workload or workforce identity pool.
func mayHoldCaller(m string) bool {
	return strings.HasPrefix(m, "group:") || strings.HasPrefix(m, "principalSet:")
}

// isServiceAccount reports whether the email is a service account's.
func isServiceAccount(email string) bool {
	return strings.HasSuffix(strings.ToLower(email), ".gserviceaccount.com")
}

// callerMember is the IAM member naming the caller.
func callerMember(caller string) string {
	if isServiceAccount(caller) {
		return "serviceAccount:" + caller
	}
	if strings.Contains(caller, "@") {
		return "user:" + caller
	}
	return caller
}

// ReviewAccess reads the policy the write changes and returns the members
// it removes and adds, and the caller's own roles it removes: a create or
// an update makes the policy policyData (whatever it holds now), a delete
// clears it. See resources.AccessReviewer.
func (d *PolicyDriver) ReviewAccess(ctx context.Context, w resources.AccessWrite) (resources.AccessReview, error) {
	if w.Op == resources.WriteDelete {
		pid, err := d.scope.parseID(w.ID, 1)
		if err != nil {
			return resources.AccessReview{}, resources.Refused(err)
		}
		return d.cl.review(ctx, pid.target, d.edit(gcpiam.Policy{}), w.AllowSelfLockout)
	}
	t, doc, err := d.inputs(w.Want)
	if err != nil {
		return resources.AccessReview{}, err
	}
	return d.cl.review(ctx, t, d.edit(doc), w.AllowSelfLockout)
}

// ReviewAccess reads the policy the write changes and returns the members
// of the binding's role it removes and adds, and the caller's own roles it
// removes: a create or an update makes the role's members (under the
// condition) exactly members, a delete removes them all.
func (d *BindingDriver) ReviewAccess(ctx context.Context, w resources.AccessWrite) (resources.AccessReview, error) {
	if w.Op == resources.WriteDelete {
		bid, err := d.scope.parseID(w.ID, 2)
		if err != nil {
			return resources.AccessReview{}, resources.Refused(err)
		}
		return d.cl.review(ctx, bid.target, d.deleteEdit(bid), w.AllowSelfLockout)
	}
	in, err := d.inputs(w.Want)
	if err != nil {
		return resources.AccessReview{}, err
	}
	return d.cl.review(ctx, in.t, d.writeEdit(in), w.AllowSelfLockout)
}

// ReviewAccess reads the policy the write changes: a create adds the
// member, unless the role has it already; a delete removes it, and with
// it the caller's own role when the member is the caller's. An update
// writes nothing (every input forces a replacement).
func (d *MemberDriver) ReviewAccess(ctx context.Context, w resources.AccessWrite) (resources.AccessReview, error) {
	switch w.Op {
	case resources.WriteDelete:
		mid, err := d.scope.parseID(w.ID, 3)
		if err != nil {
			return resources.AccessReview{}, resources.Refused(err)
		}
		return d.cl.review(ctx, mid.target, d.deleteEdit(mid), w.AllowSelfLockout)
	case resources.WriteCreate:
		in, err := d.inputs(w.Want)
		if err != nil {
			return resources.AccessReview{}, err
		}
		return d.cl.review(ctx, in.t, d.createEdit(in), w.AllowSelfLockout)
	}
	return resources.AccessReview{}, nil
}

// DescribeAccessChange lists the members of each binding (role and
// condition) that policyData after grants and before does not, and the
// other way round; nothing when either is not a policy document.
func (policyResults) DescribeAccessChange(before, after resources.Attrs) []resources.AccessChange {
	a, aok := before["policyData"].(string)
	b, bok := after["policyData"].(string)
	if !aok || !bok {
		return nil
	}
	pa, errA := gcpiam.Parse(a)
	pb, errB := gcpiam.Parse(b)
	if errA != nil || errB != nil {
		return nil
	}
	return accessChanges(resourceOf(before, after), pa, pb)
}

// DescribeAccessChange lists the members the binding's role gained and
// lost, under its condition.
func (d *BindingDriver) DescribeAccessChange(before, after resources.Attrs) []resources.AccessChange {
	role, _ := after["role"].(string)
	if role == "" {
		role, _ = before["role"].(string)
	}
	if role == "" {
		return nil
	}
	var title string
	if c, ok := after["condition"].(map[string]any); ok {
		title, _ = c["title"].(string)
	}
	a, b := stringSet(before["members"]), stringSet(after["members"])
	var out []resources.AccessChange
	res := resourceOf(before, after)
	for m := range a {
		if !b[m] {
			out = append(out, resources.AccessChange{Resource: res, Role: role, Condition: title, Member: m})
		}
	}
	for m := range b {
		if !a[m] {
			out = append(out, resources.AccessChange{Resource: res, Role: role, Condition: title, Member: m, Added: true})
		}
	}
	resources.SortAccessChanges(out)
	return out
}

// resourceOf names the object whose policy the attributes (of a policy,
// binding or lookup) are of: a lookup's id, else its consumerProject in
// canonical form, or its serviceName; "" when they name none well.
func resourceOf(attrs ...resources.Attrs) string {
	for _, a := range attrs {
		if id, _ := a["id"].(string); strings.HasPrefix(id, "services/") && !strings.Contains(id, " ") {
			if _, err := consumersScope.parseResource(id); err == nil {
				return id
			}
			if _, err := serviceScope.parseResource(id); err == nil {
				return id
			}
		}
		service, _ := a["serviceName"].(string)
		service = strings.TrimPrefix(service, "services/")
		if service == "" || strings.Contains(service, "/") {
			continue
		}
		consumer, ok := a["consumerProject"].(string)
		if !ok {
			return "services/" + service
		}
		if t, err := consumersScope.parseResource(consumer); err == nil {
			return t.resource()
		}
		if consumer != "" && !strings.Contains(consumer, "/") {
			return "services/" + service + "/consumers/" + consumer
		}
	}
	return ""
}
