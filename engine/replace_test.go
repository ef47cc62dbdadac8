package engine_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
)

// Replacements that create the new object first delete the old one only
// once every node depending on the resource has finished: the fake cloud
// refuses, as OCI does, to delete an object that another one refers to.

const replaceOpt = "options.replaceOnChanges: [modelId]"

// eventLog collects apply events, in the order the observer got them.
type eventLog struct {
	mu     sync.Mutex
	events []report.Event
}

func (l *eventLog) observe(e report.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// index returns the place of the first event of addr with action and
// phase (and id, when not empty), or -1.
func (l *eventLog) index(addr string, act plan.Action, phase report.Phase, id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.events {
		if e.Addr == addr && e.Action == act && e.Phase == phase && (id == "" || e.ID == id) {
			return i
		}
	}
	return -1
}

// applyObserved applies src with refresh, the events going to a new
// eventLog.
func (h *harness) applyObserved(src string, ao apply.Options) (*plan.Plan, *report.Apply, *eventLog) {
	h.t.Helper()
	l := &eventLog{}
	ao.Observer = l.observe
	if ao.Command == "" {
		ao.Command = "apply"
	}
	p, res := h.applyWith(src, planner.Options{Refresh: true}, ao)
	return p, res, l
}

func applyText(res *report.Apply) string {
	var out, errs strings.Builder
	render.ApplyText(&out, &errs, res, render.RunApply)
	return out.String() + errs.String()
}

// TestReplaceDeletesOldObjectAfterDependents: m is replaced; e refers to
// it directly and v through a variable. The old m is deleted after both
// are updated to the new one, and the progress shows its deletion then.
func TestReplaceDeletesOldObjectAfterDependents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	spec := func(model string) string {
		return "variables:\n  mid: ${m.id}\n" + resourcesOf(
			endpoint("m", "model", "modelId: "+model, replaceOpt),
			endpoint("e", "e", "description: serves ${m.id}"),
			endpoint("v", "v", "description: via ${mid}"),
		)
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	old, e, v := h.record("m").ID, h.record("e").ID, h.record("v").ID
	calls := len(h.cloud.callLog())

	// One at a time, so that the order does not hide a missing
	// dependency: v is reached last, through the variable.
	p, res, events := h.applyObserved(spec("ocid1.ailanguagemodel.oc1..m2"), apply.Options{Parallelism: 1})
	if got, want := actions(p), "m:replace e:update v:update"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("apply: %v: %v", err, res.Failed)
	}
	log := newCalls(h.cloud.callLog(), calls)
	del := indexOf(log, "delete "+old)
	if c, ue, uv := indexOf(log, "create model"), indexOf(log, "update "+e), indexOf(log, "update "+v); c < 0 || ue < c || uv < c || del < ue || del < uv {
		t.Errorf("calls = %q, want the create of m, the updates of e and v, then the delete of %s", log, old)
	}
	if res.Counts[plan.Replace] != 1 || res.Counts[plan.Update] != 2 || res.Counts[plan.Create] != 0 || res.Counts[plan.Delete] != 0 {
		t.Errorf("counts = %v, want 1 replaced and 2 updated", res.Counts)
	}
	if !res.Complete() || len(res.Deposed) != 0 {
		t.Errorf("result: complete %v, deposed %v; want complete with nothing deposed", res.Complete(), res.Deposed)
	}
	m := h.record("m")
	if m.ID == old || len(m.Deposed) != 0 {
		t.Errorf("record of m = id %q deposed %v, want the new object and nothing deposed", m.ID, m.Deposed)
	}
	if _, ok := h.cloud.object(old); ok {
		t.Errorf("the replaced object %s still exists", old)
	}
	if got := h.record("v").Inputs["description"]; got != "via "+m.ID {
		t.Errorf("v's description = %v, want it to follow the new id %s", got, m.ID)
	}
	// Progress: the old object's deletion, with its id, after the
	// dependents' updates are done.
	start := events.index("m", plan.Delete, report.Started, old)
	if start < 0 || events.index("m", plan.Delete, report.Done, old) < start {
		t.Errorf("no Destroying/Destruction complete events for m with id %s: %+v", old, events.events)
	}
	if de, dv := events.index("e", plan.Update, report.Done, ""), events.index("v", plan.Update, report.Done, ""); de < 0 || dv < 0 || start < de || start < dv {
		t.Errorf("m's old object's delete started (event %d) before the dependents' updates were done (%d, %d)", start, de, dv)
	}
	if out := applyText(res); !strings.Contains(out, "Apply complete! 0 created, 2 updated, 1 replaced, 0 destroyed") {
		t.Errorf("summary:\n%s", out)
	}
	if p := h.plan(spec("ocid1.ailanguagemodel.oc1..m2"), planner.Options{Refresh: true}); p.HasChanges() {
		t.Errorf("plan after the replacement = %q, want no changes", actions(p))
	}
}

// TestReplaceDependentFails: when a dependent fails to move to the new
// object, the old one is not deleted: it stays in state as deposed, the
// result and its summary say so, and the next apply deletes it once the
// dependent has moved.
func TestReplaceDependentFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	spec := func(model string) string {
		return resourcesOf(
			endpoint("m", "model", "modelId: "+model, replaceOpt),
			endpoint("e", "e", "description: serves ${m.id}"),
		)
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	old, e := h.record("m").ID, h.record("e").ID
	h.cloud.failUpdate = func(id string) error {
		if id == e {
			return errors.New("400 InvalidParameter: no capacity")
		}
		return nil
	}
	_, res := h.apply(spec("ocid1.ailanguagemodel.oc1..m2"))
	if len(res.Failed) != 1 || res.Failed[0].Addr != "e" {
		t.Fatalf("failed = %v, want e", res.Failed)
	}
	if len(res.Skipped) != 0 || len(res.NotStarted) != 0 {
		t.Errorf("skipped %v, not started %v; want neither (the old object is listed as deposed)", res.Skipped, res.NotStarted)
	}
	if want := []report.Deposed{{Addr: "m", Type: endpointToken, IDs: []string{old}}}; !reflect.DeepEqual(res.Deposed, want) {
		t.Errorf("deposed = %+v, want %+v", res.Deposed, want)
	}
	if res.Complete() || res.Err() == nil {
		t.Errorf("the result is complete (%v) or has no error (%v)", res.Complete(), res.Err())
	}
	m := h.record("m")
	if m.ID == old || !reflect.DeepEqual(m.Deposed, []string{old}) {
		t.Errorf("record of m = id %q deposed %v, want the new object with %s deposed", m.ID, m.Deposed, old)
	}
	if _, ok := h.cloud.object(old); !ok {
		t.Errorf("the old object %s was deleted while e still used it", old)
	}
	if res.Counts[plan.Create] != 1 || res.Counts[plan.Replace] != 0 {
		t.Errorf("counts = %v, want 1 created (the new object) and no replacement done", res.Counts)
	}
	out := applyText(res)
	for _, want := range []string{"Apply incomplete: 1 created", `m (deposed object "` + old + `")`, "the next apply deletes them"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
	var js strings.Builder
	if err := render.ApplyJSON(&js, res, render.RunApply); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"deposed": [`) || !strings.Contains(js.String(), `"address": "m"`) || !strings.Contains(js.String(), `"`+old+`"`) {
		t.Errorf("the JSON result does not list m's deposed object:\n%s", js.String())
	}

	h.cloud.failUpdate = nil
	p := h.plan(spec("ocid1.ailanguagemodel.oc1..m2"), planner.Options{Refresh: true})
	if c := change(t, p, "m"); c.Action != plan.NoOp || !reflect.DeepEqual(c.Deposed, []string{old}) {
		t.Errorf("next plan: m is %s with deposed %v, want a no-op that destroys %s", c.Action, c.Deposed, old)
	}
	calls := len(h.cloud.callLog())
	_, res = h.mustApply(spec("ocid1.ailanguagemodel.oc1..m2"))
	log := newCalls(h.cloud.callLog(), calls)
	if ue, del := indexOf(log, "update "+e), indexOf(log, "delete "+old); ue < 0 || del < ue {
		t.Errorf("calls = %q, want e updated, then %s deleted", log, old)
	}
	if _, ok := h.cloud.object(old); ok {
		t.Errorf("the next apply left the deposed object %s", old)
	}
	if m := h.record("m"); len(m.Deposed) != 0 {
		t.Errorf("record of m still lists deposed %v", m.Deposed)
	}
	if len(res.Deposed) != 0 {
		t.Errorf("deposed = %+v after the next apply, want none", res.Deposed)
	}
}

// TestReplaceChain: m and e, which refers to m, are both replaced, and f
// refers to e. The old e goes once f has moved, and the old m once the
// old e is gone.
func TestReplaceChain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	spec := func(model string) string {
		return resourcesOf(
			endpoint("m", "model", "modelId: "+model, replaceOpt),
			endpoint("e", "e", "description: serves ${m.id}", "options.replaceOnChanges: [description]"),
			endpoint("f", "f", "description: follows ${e.id}"),
		)
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	oldM, oldE, f := h.record("m").ID, h.record("e").ID, h.record("f").ID
	calls := len(h.cloud.callLog())
	p, res, events := h.applyObserved(spec("ocid1.ailanguagemodel.oc1..m2"), apply.Options{})
	if got, want := actions(p), "m:replace e:replace f:update"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("apply: %v: %v", err, res.Failed)
	}
	log := newCalls(h.cloud.callLog(), calls)
	cm, ce, uf := indexOf(log, "create model"), indexOf(log, "create e"), indexOf(log, "update "+f)
	de, dm := indexOf(log, "delete "+oldE), indexOf(log, "delete "+oldM)
	if cm < 0 || ce < cm || uf < ce || de < uf || dm < de {
		t.Errorf("calls = %q, want: create m, create e, update f, delete the old e, delete the old m", log)
	}
	if res.Counts[plan.Replace] != 2 || res.Counts[plan.Update] != 1 || res.Counts[plan.Create] != 0 {
		t.Errorf("counts = %v, want 2 replaced, 1 updated", res.Counts)
	}
	for _, id := range []string{oldM, oldE} {
		if _, ok := h.cloud.object(id); ok {
			t.Errorf("the replaced object %s still exists", id)
		}
	}
	for _, name := range []string{"m", "e"} {
		if r := h.record(name); len(r.Deposed) != 0 {
			t.Errorf("record of %s lists deposed %v", name, r.Deposed)
		}
	}
	if se, sm := events.index("e", plan.Delete, report.Started, oldE), events.index("m", plan.Delete, report.Started, oldM); se < 0 || sm < se {
		t.Errorf("events: the old e's delete started at %d, the old m's at %d; want e's first", se, sm)
	}
}

// TestReplaceWithoutDependents: with nothing depending on it, the old
// object is deleted right after the new one is made.
func TestReplaceWithoutDependents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	spec := func(model string) string {
		return resourcesOf(endpoint("m", "model", "modelId: "+model, replaceOpt), endpoint("x", "x"))
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	old := h.record("m").ID
	calls := len(h.cloud.callLog())
	_, res, events := h.applyObserved(spec("ocid1.ailanguagemodel.oc1..m2"), apply.Options{})
	if err := res.Err(); err != nil {
		t.Fatalf("apply: %v: %v", err, res.Failed)
	}
	if log := newCalls(h.cloud.callLog(), calls); !reflect.DeepEqual(log, []string{"create model", "delete " + old}) {
		t.Errorf("calls = %q, want the create, then the delete of %s", log, old)
	}
	if done, del := events.index("m", plan.Create, report.Done, ""), events.index("m", plan.Delete, report.Started, old); done < 0 || del != done+1 {
		t.Errorf("events: create done at %d, delete of %s started at %d; want it next: %+v", done, old, del, events.events)
	}
	if res.Counts[plan.Replace] != 1 || res.Counts[plan.Create] != 0 {
		t.Errorf("counts = %v, want 1 replaced", res.Counts)
	}
}

// TestReplaceWaitsForDependentsThatMoveAway: the old object's delete also
// waits for what referred to it in state and no longer does in the specs:
// a resource removed (deleted first) and one whose reference was dropped
// (updated first).
func TestReplaceWaitsForDependentsThatMoveAway(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	h.mustApply(resourcesOf(
		endpoint("m", "model", "modelId: ocid1.ailanguagemodel.oc1..m1", replaceOpt),
		endpoint("gone", "gone", "description: serves ${m.id}"),
		endpoint("moved", "moved", "description: serves ${m.id}"),
	))
	old, gone, moved := h.record("m").ID, h.record("gone").ID, h.record("moved").ID
	calls := len(h.cloud.callLog())
	// One at a time, m first, and moved only after the new z: nothing but
	// the dependencies of the old object's delete makes it wait.
	p, res, _ := h.applyObserved(resourcesOf(
		endpoint("m", "model", "modelId: ocid1.ailanguagemodel.oc1..m2", replaceOpt),
		endpoint("moved", "moved", "description: next to ${z.id}"),
		endpoint("z", "z"),
	), apply.Options{Parallelism: 1})
	if err := res.Err(); err != nil {
		t.Fatalf("apply: %v: %v", err, res.Failed)
	}
	if got, want := sortedActions(p), "gone:delete m:replace moved:update z:create"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	log := newCalls(h.cloud.callLog(), calls)
	del := indexOf(log, "delete "+old)
	if dg, um := indexOf(log, "delete "+gone), indexOf(log, "update "+moved); dg < 0 || um < 0 || del < dg || del < um {
		t.Errorf("calls = %q, want %s deleted after gone's delete and moved's update", log, old)
	}
	if res.Counts[plan.Replace] != 1 || res.Counts[plan.Delete] != 1 || res.Counts[plan.Update] != 1 || res.Counts[plan.Create] != 1 {
		t.Errorf("counts = %v", res.Counts)
	}
}

// TestReplaceStoppedBeforeDeposedDelete: an apply stopped once the
// dependent has moved, before the old object's delete started, leaves the
// old object recorded as deposed; the result says so, and the next apply
// deletes it.
func TestReplaceStoppedBeforeDeposedDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.refuseInUse = true
	spec := func(model string) string {
		return resourcesOf(
			endpoint("m", "model", "modelId: "+model, replaceOpt),
			endpoint("e", "e", "description: serves ${m.id}"),
		)
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	old, e := h.record("m").ID, h.record("e").ID
	stop := make(chan struct{})
	var once sync.Once
	h.cloud.failUpdate = func(id string) error {
		if id == e {
			once.Do(func() { close(stop) }) // stop while e's update runs
		}
		return nil
	}
	_, res, events := h.applyObserved(spec("ocid1.ailanguagemodel.oc1..m2"), apply.Options{Stop: stop})
	if len(res.Failed) != 0 || len(res.Interrupted) != 0 || len(res.NotStarted) != 0 {
		t.Fatalf("failed %v, interrupted %v, not started %v; want none", res.Failed, res.Interrupted, res.NotStarted)
	}
	if res.Stopped != "stopped" {
		t.Errorf("stopped = %q, want %q", res.Stopped, "stopped")
	}
	if want := []report.Deposed{{Addr: "m", Type: endpointToken, IDs: []string{old}}}; !reflect.DeepEqual(res.Deposed, want) {
		t.Errorf("deposed = %+v, want %+v", res.Deposed, want)
	}
	if i := events.index("m", plan.Delete, report.Started, ""); i >= 0 {
		t.Errorf("a delete of m started after the stop: %+v", events.events[i])
	}
	if m := h.record("m"); !reflect.DeepEqual(m.Deposed, []string{old}) {
		t.Errorf("record of m: deposed %v, want [%s]", m.Deposed, old)
	}
	if out := applyText(res); !strings.Contains(out, "Apply stopped before it was done") || !strings.Contains(out, old) {
		t.Errorf("summary:\n%s", out)
	}

	h.cloud.failUpdate = nil
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m2"))
	if _, ok := h.cloud.object(old); ok {
		t.Errorf("the next apply left the deposed object %s", old)
	}
	if m := h.record("m"); len(m.Deposed) != 0 {
		t.Errorf("record of m still lists deposed %v", m.Deposed)
	}
}

// TestReplaceDeposedDeleteInterrupted: an apply cancelled while it deletes
// the old object keeps it recorded as deposed; the next apply deletes it.
func TestReplaceDeposedDeleteInterrupted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := func(model string) string {
		return resourcesOf(endpoint("m", "model", "modelId: "+model, replaceOpt), endpoint("e", "e", "description: serves ${m.id}"))
	}
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m1"))
	old := h.record("m").ID
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h.cloud.failDelete = func(id string) error {
		if id != old {
			return nil
		}
		cancel() // as a signal would, while the delete runs
		return ctx.Err()
	}
	res := <-h.applyCtx(ctx, spec("ocid1.ailanguagemodel.oc1..m2"), apply.Options{Command: "apply"})
	if len(res.Interrupted) != 1 || res.Interrupted[0].Addr != "m" || len(res.Failed) != 0 {
		t.Fatalf("interrupted %v, failed %v; want m's delete interrupted", res.Interrupted, res.Failed)
	}
	if want := []report.Deposed{{Addr: "m", Type: endpointToken, IDs: []string{old}}}; !reflect.DeepEqual(res.Deposed, want) {
		t.Errorf("deposed = %+v, want %+v", res.Deposed, want)
	}
	m := h.record("m")
	if m.ID == old || !reflect.DeepEqual(m.Deposed, []string{old}) {
		t.Errorf("record of m = id %q deposed %v, want the new object with %s deposed", m.ID, m.Deposed, old)
	}
	if got := h.record("e").Inputs["description"]; got != "serves "+m.ID {
		t.Errorf("e's description = %v, want the new id", got)
	}

	h.cloud.failDelete = nil
	h.mustApply(spec("ocid1.ailanguagemodel.oc1..m2"))
	if _, ok := h.cloud.object(old); ok {
		t.Errorf("the next apply left the deposed object %s", old)
	}
	if m := h.record("m"); len(m.Deposed) != 0 {
		t.Errorf("record of m still lists deposed %v", m.Deposed)
	}
}
