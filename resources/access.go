package resources

import (
	"cmp"
	"context"
	"slices"
)

// AccessReviewer is optional on a Driver whose objects say who may do
// what (an IAM policy, a binding or a member of one; a restriction
// policy). Before a plan is shown, the planner asks it what each write
// the plan makes would change of the live access, read now, so that the
// plan lists the members a write removes and adds, and refuses a write
// that would take the caller's own access away.
type AccessReviewer interface {
	// ReviewAccess reads the live access w would change and returns what
	// it would remove and add, and which of the caller's own memberships
	// it would remove (Lockouts). It changes nothing. An error matching
	// ErrRefused is a write the vendor's API is known to refuse at apply
	// (Datadog's refusal of bindings that lower the caller's own access):
	// its text says why, as the API would. Other errors are failed reads.
	ReviewAccess(ctx context.Context, w AccessWrite) (AccessReview, error)
}

// AccessWrite is one write a plan makes, as AccessReviewer sees it.
type AccessWrite struct {
	Op WriteOp
	// ID is the object's id, for an update or a delete; "" for a create.
	ID string
	// Want holds the desired inputs, normalised and in clear, for a
	// create or an update; nil for a delete.
	Want Attrs
	// Live holds the object's attributes as the plan read them from the
	// cloud just now (a refresh), for an update; nil when it did not read
	// them. A reviewer whose object holds the whole policy may take them
	// for the live policy rather than read it again.
	Live Attrs
	// AllowSelfLockout says that the caller may lose its own access
	// (--allow-self-lockout): a driver that cannot tell who the caller
	// is does not fail the review for that, and returns no Lockouts.
	AllowSelfLockout bool
}

// WriteOp is what a write does to its object.
type WriteOp int

// Writes.
const (
	WriteCreate WriteOp = iota
	WriteUpdate
	WriteDelete
)

// AccessReview is what a write would change of the live access.
type AccessReview struct {
	// Changes are the members the write adds and removes, role by role,
	// in the order SortAccessChanges gives.
	Changes []AccessChange
	// Lockouts are the caller's own memberships the write removes, sorted
	// by resource and role.
	Lockouts []Lockout
}

// AccessChange is one member that a write, or a change made outside
// reconcile, adds to or removes from a role of an access policy.
type AccessChange struct {
	// Resource names what the policy governs: "services/S" or
	// "services/S/consumers/C" for a GCP IAM policy, the resource id for
	// a Datadog restriction policy.
	Resource string
	// Role is the role (an IAM role, a Datadog relation).
	Role string
	// Condition is the title of the binding's condition, "" for none.
	Condition string
	// Member is the member (an IAM member, a Datadog principal).
	Member string
	// Added is true for a member added, false for one removed.
	Added bool
}

// Lockout is a membership of the caller's own that a write removes: the
// caller has the role now through Member, and would have it no more.
type Lockout struct {
	Resource string
	Role     string
	// Caller names who the driver calls the API as, such as
	// "reconcile@acme-prod.iam.gserviceaccount.com".
	Caller string
	// Member is the member the caller has the role through now, such as
	// "serviceAccount:reconcile@acme-prod.iam.gserviceaccount.com".
	Member string
	// Keep says how to keep the role, for the error a plan gives.
	Keep string
}

// SortAccessChanges sorts changes by resource, role and condition, the
// members removed before those added, then by member.
func SortAccessChanges(changes []AccessChange) {
	slices.SortFunc(changes, func(a, b AccessChange) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Role, b.Role), cmp.Compare(a.Condition, b.Condition),
			compareBool(a.Added, b.Added), cmp.Compare(a.Member, b.Member))
	})
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// AccessDescriber is optional on a ResultComparer whose results grant
// access (an IAM policy's policyData, a binding's members): for drift, it
// says member by member what the result after grants that the result
// before does not, and the other way round. Like DescribeResultChange, it
// is pure and deterministic, must not panic on values of an unexpected
// shape, and returns nil when it has nothing to say.
type AccessDescriber interface {
	DescribeAccessChange(before, after Attrs) []AccessChange
}

// WithSelfLockout returns a context whose writes guard, or not, against
// removing the caller's own access: a driver offering AccessReviewer
// refuses, at the moment it writes, a write made with ctx that would
// remove one of the caller's own memberships, unless allow is set. The
// CLI installs it around every apply with what the plan allows
// (--allow-self-lockout, or the plan file's record of it), so that a
// policy that changed since the plan cannot lock the caller out behind
// the reviewer's back. Without it, a driver does not guard.
func WithSelfLockout(ctx context.Context, allow bool) context.Context {
	return context.WithValue(ctx, lockoutKey, allow)
}

// SelfLockoutGuard reports whether a write made with ctx must refuse to
// remove the caller's own access: WithSelfLockout was installed, and did
// not allow it.
func SelfLockoutGuard(ctx context.Context) bool {
	allow, set := ctx.Value(lockoutKey).(bool)
	return set && !allow
}

type lockoutKeyType struct{}

var lockoutKey lockoutKeyType
