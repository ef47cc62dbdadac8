package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/resources"
)

// bulkCloud is a fake cloud that also reads in bulk: ReadMany returns
// every object asked for that exists and is not hidden, without its
// projectId, which BulkOmitted names (as an OCI endpoint's list lacks
// timeUpdated).
type bulkCloud struct {
	*fakeCloud

	mu     sync.Mutex
	hidden map[string]bool // ids ReadMany leaves out
	fail   bool            // ReadMany fails
	asked  [][]resources.BulkObject
}

var _ resources.BulkReader = (*bulkCloud)(nil)

func (b *bulkCloud) ReadMany(ctx context.Context, objs []resources.BulkObject, parallelism int) (map[string]resources.Attrs, error) {
	b.mu.Lock()
	b.asked = append(b.asked, objs)
	hidden, fail := b.hidden, b.fail
	b.mu.Unlock()
	if fail {
		return nil, errors.New("list failed")
	}
	out := map[string]resources.Attrs{}
	for _, o := range objs {
		a, ok := b.object(o.ID)
		if !ok || hidden[o.ID] {
			continue
		}
		delete(a, "projectId")
		out[o.ID] = a
	}
	return out, nil
}

func (b *bulkCloud) BulkOmitted() []string { return []string{"projectId"} }

// lastAsked returns the ids of the last ReadMany call, sorted, and how many
// calls were made.
func (b *bulkCloud) lastAsked() ([]string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.asked) == 0 {
		return nil, 0
	}
	var ids []string
	for _, o := range b.asked[len(b.asked)-1] {
		ids = append(ids, o.ID)
		if o.Attrs["compartmentId"] != "ocid1.compartment.oc1..x" {
			panic("ReadMany was not given the recorded attributes")
		}
	}
	slices.Sort(ids)
	return ids, len(b.asked)
}

// TestBulkRefresh checks that a refresh takes from a driver's bulk read
// every object it returns, and reads the others one by one, so that what
// a plan, a refresh-only plan and drift find is what they find reading
// every object alone: an object the bulk read leaves out is read, and is
// deleted outside only when Read says so; one whose bulk attributes
// drifted is read again; a failed bulk read falls back to reading each.
func TestBulkRefresh(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bc := &bulkCloud{fakeCloud: h.cloud}
	h.reg.Drivers[endpointToken] = bc
	src := resourcesOf(endpoint("a", "first"), endpoint("b", "second"), endpoint("c", "third"), endpoint("d", "fourth"))
	h.mustApply(src)
	recs := h.records()
	ids := []string{recs["a"].ID, recs["b"].ID, recs["c"].ID, recs["d"].ID}
	slices.Sort(ids)
	reads := func() int { return h.cloud.readCount() }

	// Nothing changed: no object is read alone, and the output the bulk
	// read lacks is the recorded one.
	before := reads()
	p := h.plan(src, planner.Options{Refresh: true})
	if n := reads() - before; n != 0 || p.HasChanges() || p.HasDrift() {
		t.Errorf("no-change plan: %d reads alone, changes %v, drift %v; want none", n, p.HasChanges(), p.HasDrift())
	}
	if asked, calls := bc.lastAsked(); calls != 1 || !slices.Equal(asked, ids) {
		t.Errorf("ReadMany asked for %v in %d calls, want %v in one", asked, calls, ids)
	}
	if got := change(t, p, "a").Before["projectId"]; got != "ocid1.project" {
		t.Errorf("a's projectId from the bulk read = %v, want the recorded ocid1.project", got)
	}
	if rep := h.drift(src); rep.HasDrift() || len(rep.Errors) > 0 || reads()-before != 0 {
		t.Errorf("drift: %+v, %d reads alone; want no drift and no read alone", rep, reads()-before)
	}

	// b is left out of the bulk read but exists; c is gone; d drifted.
	bc.mu.Lock()
	bc.hidden = map[string]bool{recs["b"].ID: true}
	bc.mu.Unlock()
	h.cloud.remove(recs["c"].ID)
	h.edit(recs["d"].ID, resources.Attrs{"displayName": "renamed by hand", "projectId": "ocid1.project.moved"})
	before = reads()
	p = h.plan(src, planner.Options{Refresh: true})
	if n := reads() - before; n != 3 {
		t.Errorf("plan read %d objects alone, want 3: b (left out), c (gone), d (drifted)", n)
	}
	if b := change(t, p, "b"); b.Action != plan.NoOp || b.Drifted() {
		t.Errorf("b = %s, drift %v; want an unchanged no-op, read alone", b.Action, b.Drift)
	}
	if c := change(t, p, "c"); c.Action != plan.Create || !c.DeletedOutside {
		t.Errorf("c = %s, deleted outside %v; want a create of an object deleted outside", c.Action, c.DeletedOutside)
	}
	d := change(t, p, "d")
	if d.Action != plan.Update || driftPaths(d) != "displayName" || d.Before["projectId"] != "ocid1.project.moved" {
		t.Errorf("d = %s with drift %q, projectId %v; want an update with drift displayName, read whole", d.Action, driftPaths(d), d.Before["projectId"])
	}
	before = reads()
	rep := h.drift(src)
	if n := reads() - before; n != 3 || len(rep.Items) != 2 {
		t.Fatalf("drift: %d reads alone, items %+v; want 3 reads, c deleted and d changed", n, rep.Items)
	}
	if rep.Items[0].Addr != "c" || rep.Items[0].Status != report.DriftDeleted || rep.Items[1].Addr != "d" || rep.Items[1].Status != report.DriftChanged {
		t.Errorf("drift items = %+v, want c deleted and d changed", rep.Items)
	}
	// A refresh-only apply records what Read found of d, projectId too.
	h.refreshOnly(src)
	if got := h.record("d").Outputs["projectId"]; got != "ocid1.project.moved" {
		t.Errorf("after apply --refresh-only, d's projectId = %v, want the live ocid1.project.moved", got)
	}

	// A failed bulk read: every object is read alone, with the same plan.
	bc.mu.Lock()
	bc.hidden, bc.fail = nil, true
	bc.mu.Unlock()
	before = reads()
	p = h.plan(src, planner.Options{Refresh: true})
	if n := reads() - before; n != 3 { // a, b, d: c is gone from state
		t.Errorf("with a failed bulk read, %d reads alone, want 3", n)
	}
	if d := change(t, p, "d"); d.Action != plan.Update || d.Drifted() {
		t.Errorf("d = %s, drift %v; want an update back to the specs, its drift accepted", d.Action, d.Drift)
	}

	// A destroy plan learns from the bulk read which objects still exist.
	bc.mu.Lock()
	bc.fail = false
	bc.mu.Unlock()
	h.cloud.remove(recs["a"].ID)
	before = reads()
	p = h.plan(src, planner.Options{Refresh: true, Destroy: true})
	if n := reads() - before; n != 1 {
		t.Errorf("destroy plan: %d reads alone, want 1 (a, gone)", n)
	}
	if a := change(t, p, "a"); a.Action != plan.Forget || !a.DeletedOutside {
		t.Errorf("destroy plan: a = %s, want forgotten, deleted outside", a.Action)
	}
	if b := change(t, p, "b"); b.Action != plan.Delete {
		t.Errorf("destroy plan: b = %s, want a delete", b.Action)
	}
}
