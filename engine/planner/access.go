package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/dag"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/resources"
)

// Access reviews.
//
// A write to an access policy (an IAM policy, binding or member; a Datadog
// restriction policy) is reviewed against the live policy, read now,
// whatever Options.Refresh says: the driver (resources.AccessReviewer)
// says which members it removes and adds, role by role, which the change
// records (plan.Change.Access), and which of the caller's own memberships
// it removes (plan.Change.Lockouts), an error unless
// Options.AllowSelfLockout. A write the vendor's API is known to refuse
// (an error matching resources.ErrRefused) is an error too, with the
// driver's reason. A review that fails otherwise (the live policy cannot be
// read) is a warning: the plan goes on without the list, and the apply
// meets the same trouble or checks each write as it is sent.
//
// Writes whose inputs are known only at apply, or hold a secret (which a
// list of members would show), are not reviewed: the driver guards at
// apply (resources.WithSelfLockout) all the same.

// writesOf lists the writes the apply of c makes, each as its driver
// would be asked to review it, with want the desired inputs in clear.
// live is the object as the plan read it, for an update, or nil.
func writesOf(c *plan.Change, want, live resources.Attrs, allow bool) []resources.AccessWrite {
	w := func(op resources.WriteOp, id string, in resources.Attrs) resources.AccessWrite {
		return resources.AccessWrite{Op: op, ID: id, Want: in, AllowSelfLockout: allow}
	}
	switch c.Action {
	case plan.Create:
		return []resources.AccessWrite{w(resources.WriteCreate, "", want)}
	case plan.Update:
		if c.Reason == plan.ReasonOptionsChanged {
			return nil // state alone changes
		}
		u := w(resources.WriteUpdate, c.ID, want)
		u.Live = live
		return []resources.AccessWrite{u}
	case plan.Replace:
		if c.ID == "" {
			return []resources.AccessWrite{w(resources.WriteCreate, "", want)}
		}
		return []resources.AccessWrite{w(resources.WriteCreate, "", want), w(resources.WriteDelete, c.ID, nil)}
	case plan.Import:
		return []resources.AccessWrite{w(resources.WriteUpdate, c.ImportID, want)}
	case plan.Delete:
		if c.ID == "" {
			return nil
		}
		return []resources.AccessWrite{w(resources.WriteDelete, c.ID, nil)}
	}
	return nil
}

// reviewAccess reviews the writes of c, the change of the resource name
// declared at pos, whose desired inputs are desired (nil for a delete),
// when its driver is an AccessReviewer; see Access reviews. It reports a
// problem as an error diagnostic at pos, and returns errReported.
func (p *planner) reviewAccess(ctx context.Context, name string, pos diag.Pos, c *plan.Change, desired map[string]any) error {
	rv, ok := p.reg.Drivers[c.Type].(resources.AccessReviewer)
	if !ok {
		return nil
	}
	var want resources.Attrs
	if desired != nil {
		if value.ContainsUnknown(desired) || value.ContainsSecret(desired) {
			return nil
		}
		plain, _ := value.Reveal(desired)
		want = resources.Attrs(plain.(map[string]any))
	}
	var live resources.Attrs
	if p.opts.Refresh && c.Action == plan.Update {
		// The object as refresh read it, unless a secret hides part of it.
		if before, _, err := c.Values(); err == nil && before != nil && !value.ContainsSecret(before) {
			live = resources.Attrs(before)
		}
	}
	var changes []resources.AccessChange
	var lockouts []resources.Lockout
	for _, w := range writesOf(c, want, live, p.opts.AllowSelfLockout) {
		got, err := rv.ReviewAccess(resources.WithNode(ctx, name), w)
		switch {
		case errors.Is(err, resources.ErrRefused):
			return p.fail(pos, "%s: %v", name, err)
		case err != nil:
			// The apply meets the same trouble, or writes, checking each
			// write as it is sent; the plan says what it could not show.
			d := diag.Diagnostic{Pos: pos, Severity: diag.Warning,
				Summary: fmt.Sprintf("%s: the members its apply removes and adds cannot be listed: %v", name, err),
				Detail:  "the live policy could not be read; the apply still refuses a write that would remove the caller's own access"}
			p.addDiag(d)
			return nil
		}
		changes = append(changes, got.Changes...)
		lockouts = append(lockouts, got.Lockouts...)
	}
	c.Access = refresh.AccessChanges(changes)
	// A replacement's create may give back what its delete takes away.
	lockouts = slices.DeleteFunc(lockouts, func(l resources.Lockout) bool {
		return slices.ContainsFunc(changes, func(a resources.AccessChange) bool {
			return a.Added && a.Resource == l.Resource && a.Role == l.Role && a.Member == l.Member
		})
	})
	if len(lockouts) == 0 {
		return nil
	}
	if !p.opts.AllowSelfLockout {
		for _, l := range lockouts {
			d := diag.Errorf(pos, "%s: the apply would remove the caller's own access: %s has %s on %s through %s, and would lose it",
				name, l.Caller, l.Role, l.Resource, l.Member)
			d.Detail = l.Keep + ". If the caller is meant to lose it, plan and apply with --allow-self-lockout: " +
				"the plan file records it, and its apply lets it."
			p.addDiag(d)
		}
		return errReported
	}
	for _, l := range lockouts {
		c.Lockouts = append(c.Lockouts, plan.Lockout{Resource: l.Resource, Role: l.Role, Caller: l.Caller, Member: l.Member})
	}
	return nil
}

// reviewDeletes reviews the deletes among changes, each in its own
// goroutine, up to Options.Parallelism at once.
func (p *planner) reviewDeletes(ctx context.Context, changes []plan.Change) {
	byName := map[string]*plan.Change{}
	var names []string
	for i := range changes {
		c := &changes[i]
		if _, ok := p.reg.Drivers[c.Type].(resources.AccessReviewer); ok && c.Action == plan.Delete && c.ID != "" {
			byName[c.Addr] = c
			names = append(names, c.Addr)
		}
	}
	// Each goroutine writes its own change; addDiag locks.
	dag.Walk(ctx, names, nil, p.opts.Parallelism, func(ctx context.Context, name string) error {
		c := byName[name]
		_ = p.reviewAccess(ctx, name, c.Pos, c, nil)
		return nil
	})
}
