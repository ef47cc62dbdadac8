package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/resources"
)

// reviewingCloud is the fake cloud with an access reviewer: review (safe
// when unset) answers each write, which is recorded.
type reviewingCloud struct {
	*fakeCloud
	mu     sync.Mutex
	writes []string // "create", "update ID live=BOOL", "delete ID"
	review func(w resources.AccessWrite) (resources.AccessReview, error)
}

var _ resources.AccessReviewer = (*reviewingCloud)(nil)

func (r *reviewingCloud) ReviewAccess(_ context.Context, w resources.AccessWrite) (resources.AccessReview, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch w.Op {
	case resources.WriteCreate:
		r.writes = append(r.writes, "create "+fmt.Sprint(w.Want["displayName"]))
	case resources.WriteUpdate:
		r.writes = append(r.writes, fmt.Sprintf("update %s live=%v", w.ID, w.Live != nil))
	case resources.WriteDelete:
		r.writes = append(r.writes, "delete "+w.ID)
	}
	if r.review == nil {
		return resources.AccessReview{}, nil
	}
	return r.review(w)
}

func (r *reviewingCloud) reviewed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// reviewingHarness is a harness whose endpoints are reviewed.
func reviewingHarness(t *testing.T) (*harness, *reviewingCloud) {
	h := newHarness(t)
	rc := &reviewingCloud{fakeCloud: h.cloud}
	h.reg.Drivers[endpointToken] = rc
	return h, rc
}

// removing is a review removing member m from role r of policy p, and
// adding one.
func removing(p, r, m string) resources.AccessReview {
	return resources.AccessReview{Changes: []resources.AccessChange{
		{Resource: p, Role: r, Member: "user:new@x", Added: true},
		{Resource: p, Role: r, Member: m},
	}}
}

// TestPlanReviewsAccess: each write a plan makes (create, update, the
// two of a replacement, delete) is reviewed against the live object, and
// what it removes and adds is in the change, sorted, and counted in the
// summary; no-ops are not reviewed, nor writes of inputs known only at
// apply.
func TestPlanReviewsAccess(t *testing.T) {
	t.Parallel()
	h, rc := reviewingHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "one"), endpoint("b", "two"), endpoint("c", "three")))
	rc.review = func(w resources.AccessWrite) (resources.AccessReview, error) {
		return removing("policy-of-"+fmt.Sprint(w.Op), "roles/viewer", "user:old@x"), nil
	}
	rc.writes = nil
	p := h.plan(resourcesOf(
		endpoint("a", "one-renamed"), // update
		endpoint("b", "two", "options.replaceOnChanges: [displayName]", "description: d"), // update (description is not forced)
		endpoint("n", "new"),         // create
		endpoint("later", "${n.id}"), // create, known only at apply
	), planner.Options{Refresh: true})
	a, n, c := change(t, p, "a"), change(t, p, "n"), change(t, p, "c")
	if got := len(a.Access); got != 2 || a.Access[0].Added || !a.Access[1].Added || a.Access[0].Resource != "policy-of-1" {
		t.Errorf("a's access = %+v, want the member removed, then the one added, of its update", a.Access)
	}
	if len(n.Access) != 2 || n.Access[0].Resource != "policy-of-0" || len(c.Access) != 2 || c.Access[0].Resource != "policy-of-2" {
		t.Errorf("access of the create %+v and of the delete %+v", n.Access, c.Access)
	}
	if later := change(t, p, "later"); later.Access != nil {
		t.Errorf("a create of inputs known only at apply was reviewed: %+v", later.Access)
	}
	got := rc.reviewed()
	slices.Sort(got)
	aID, bID, cID := h.record("a").ID, h.record("b").ID, h.record("c").ID
	want := []string{"create new", "delete " + cID, "update " + aID + " live=true", "update " + bID + " live=true"}
	if !slices.Equal(got, want) {
		t.Errorf("writes reviewed = %q, want %q", got, want)
	}
	var text strings.Builder
	if err := render.PlanText(&text, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Plan: 2 to create (removes 1 member), 2 to update (removes 2 members), 0 to replace, 1 to destroy (removes 1 member).") {
		t.Errorf("plan text does not count the members removed:\n%s", text.String())
	}

	// Without refresh, the reviewer reads the object itself.
	rc.writes = nil
	h.plan(resourcesOf(endpoint("a", "one-renamed"), endpoint("b", "two"), endpoint("c", "three")), planner.Options{})
	if got := rc.reviewed(); !slices.Equal(got, []string{"update " + aID + " live=false"}) {
		t.Errorf("writes reviewed without refresh = %q", got)
	}
}

// TestPlanSelfLockout: a write removing the caller's own access is an
// error at the resource, naming the caller, the role, the resource, how
// to keep it and --allow-self-lockout; with it, the plan goes on,
// records the lockout and that it was allowed.
func TestPlanSelfLockout(t *testing.T) {
	t.Parallel()
	h, rc := reviewingHarness(t)
	rc.review = func(w resources.AccessWrite) (resources.AccessReview, error) {
		r := removing("services/s", "roles/owner", "serviceAccount:me@p.iam.gserviceaccount.com")
		r.Lockouts = []resources.Lockout{{Resource: "services/s", Role: "roles/owner", Caller: "me@p.iam.gserviceaccount.com",
			Member: "serviceAccount:me@p.iam.gserviceaccount.com", Keep: "To keep it, grant roles/owner to serviceAccount:me@p.iam.gserviceaccount.com"}}
		if !w.AllowSelfLockout && w.Op != resources.WriteCreate {
			return resources.AccessReview{}, errors.New("the flag did not reach the reviewer")
		}
		return r, nil
	}
	spec := resourcesOf(endpoint("owners", "x"))
	_, diags := h.makePlan(spec, planner.Options{})
	text := diagText(diags)
	for _, want := range []string{"spec.yaml:2:3", "owners: the apply would remove the caller's own access: me@p.iam.gserviceaccount.com has roles/owner on services/s through serviceAccount:me@p.iam.gserviceaccount.com",
		"To keep it, grant roles/owner", "--allow-self-lockout"} {
		if !diags.HasErrors() || !strings.Contains(text, want) {
			t.Errorf("plan without --allow-self-lockout: diagnostics %q, want an error saying %q", text, want)
		}
	}
	p := h.plan(spec, planner.Options{AllowSelfLockout: true})
	c := change(t, p, "owners")
	if !p.AllowSelfLockout || len(c.Lockouts) != 1 || c.Lockouts[0].Role != "roles/owner" || len(c.Access) != 2 {
		t.Errorf("plan with --allow-self-lockout: allowed %v, lockouts %+v, access %+v", p.AllowSelfLockout, c.Lockouts, c.Access)
	}
}

// TestPlanAccessRefused: a write the vendor's API is known to refuse
// (the reviewer's refusal) is an error at the resource with its reason,
// which --allow-self-lockout does not lift; a review that fails to read
// is a warning, and the plan goes on without the list.
func TestPlanAccessRefused(t *testing.T) {
	t.Parallel()
	h, rc := reviewingHarness(t)
	rc.review = func(w resources.AccessWrite) (resources.AccessReview, error) {
		if w.Want["displayName"] == "unreadable" {
			return resources.AccessReview{}, errors.New("read the current policy: 503")
		}
		return resources.AccessReview{}, resources.Refused(errors.New("users cannot decrease their own level of access (from editor to viewer)"))
	}
	for _, allow := range []bool{false, true} {
		_, diags := h.makePlan(resourcesOf(endpoint("pol", "x"), endpoint("other", "unreadable")), planner.Options{AllowSelfLockout: allow})
		text := diagText(diags)
		if !strings.Contains(text, "spec.yaml:2:3: error: pol: users cannot decrease their own level of access (from editor to viewer)") ||
			!strings.Contains(text, "warning: other: the members its apply removes and adds cannot be listed: read the current policy: 503") {
			t.Errorf("allow %v: diagnostics %q, want the refusal and a warning of the failed read", allow, text)
		}
	}
	p, diags := h.makePlan(resourcesOf(endpoint("other", "unreadable")), planner.Options{})
	if diags.HasErrors() || len(diags) != 1 || change(t, p, "other").Access != nil {
		t.Errorf("a review that cannot read: diagnostics %q, want a warning alone and a plan without the list", diagText(diags))
	}
}
