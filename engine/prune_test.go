package engine_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// normalizeLog is the fake cloud with a Normalizer that logs the display
// name of every object whose inputs apply evaluates.
type normalizeLog struct {
	*fakeCloud
	mu    sync.Mutex
	names []string
}

func (n *normalizeLog) Normalize(want resources.Attrs) resources.Attrs {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names = append(n.names, want["displayName"].(string))
	return want
}

func (n *normalizeLog) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.names
	n.names = nil
	slices.Sort(out)
	return out
}

// An apply evaluates the resources that change, what they read and what
// the stack outputs read, and leaves the other no-op resources alone: its
// work is in proportion to the change. What it leaves alone keeps its
// record; what reads an idle resource sees its values.
func TestApplyLeavesIdleResourcesAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	nl := &normalizeLog{fakeCloud: h.cloud}
	h.reg.Drivers[endpointToken] = nl
	spec := func(changed string) string {
		return resourcesOf(
			endpoint("e0", "e0"), endpoint("e1", "e1"), endpoint("e2", "e2"+changed), endpoint("e3", "e3"), endpoint("e4", "e4"),
			endpoint("e5", "e5"+changed, "description: ${e0.id}"),
		) + "outputs:\n  first: ${e1.id}\n"
	}
	h.mustApply(spec(""))
	before := h.records()

	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := h.load(spec("-changed"))
	p, diags := planner.Plan(t.Context(), s, st, h.reg, planner.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	nl.take()
	res, err := apply.Apply(t.Context(), p, s, st, h.reg, apply.Options{Command: "apply"})
	if err != nil || res.Err() != nil {
		t.Fatalf("apply: %v %v", err, res.Failed)
	}
	// e2 and e5 change; e5 reads e0, the output reads e1.
	if got, want := nl.take(), []string{"e0", "e1", "e2-changed", "e5-changed"}; !slices.Equal(got, want) {
		t.Errorf("apply evaluated %q, want %q", got, want)
	}
	if res.Outputs["first"] != before["e1"].ID {
		t.Errorf("output first = %v, want e1's id %q", res.Outputs["first"], before["e1"].ID)
	}
	st.Close()
	after := h.records()
	for _, name := range []string{"e3", "e4"} {
		if !sameRecordForTest(before[name], after[name]) {
			t.Errorf("%s: record changed: %+v, was %+v", name, after[name], before[name])
		}
	}
	if got := after["e5"].Inputs["description"]; got != before["e0"].ID {
		t.Errorf("e5's description = %v, want e0's id %q", got, before["e0"].ID)
	}
}

func sameRecordForTest(a, b state.Record) bool {
	return a.ID == b.ID && a.Serial == b.Serial && a.Type == b.Type
}

// The planner marks Idle the no-op resources whose record apply would
// write unchanged, and only those: one whose dependencies in state are
// not the specs' is a no-op in the cloud, but its record is written again.
func TestPlanMarksIdle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a"), endpoint("b", "b"), endpoint("c", "c"), endpoint("d", "d")))
	src := resourcesOf(endpoint("a", "a"), endpoint("b", "b-changed"), endpoint("c", "c", `options.dependsOn: ["${a}"]`),
		endpoint("d", "d", "description: ${a.displayName}"))
	p := h.plan(src, planner.Options{})
	want := map[string]bool{"a": true, "b": false, "c": false, "d": false}
	for _, c := range p.Changes {
		if c.Idle != want[c.Addr] {
			t.Errorf("%s (%s): Idle = %v, want %v", c.Addr, c.Action, c.Idle, want[c.Addr])
		}
	}
	h.mustApply(src)
	recs := h.records()
	if got := recs["c"].Dependencies; !slices.Equal(got, []string{"a"}) {
		t.Errorf("c's dependencies after apply = %q, want [a]", got)
	}
	for _, c := range h.plan(src, planner.Options{}).Changes {
		if c.Action != plan.NoOp || !c.Idle {
			t.Errorf("after apply: %s is %s, Idle %v; want an idle no-op", c.Addr, c.Action, c.Idle)
		}
	}
}
