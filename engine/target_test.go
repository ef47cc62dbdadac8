package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/state"
)

// threeEndpoints is a depends on nothing, b on a, c on nothing; the
// output bId on b, cId on c. suffix is put into every displayName, so
// that a new suffix updates all three.
func threeEndpoints(suffix string) string {
	return resourcesOf(
		endpoint("a", "first"+suffix),
		endpoint("b", "second"+suffix, "description: after ${a.id}"),
		endpoint("c", "third"+suffix),
	) + "outputs:\n  bId: ${b.id}\n  cId: ${c.id}\n"
}

// TestPlanTarget checks that a targeted plan holds its targets and what
// they depend on, and that applying it changes nothing else.
func TestPlanTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(threeEndpoints(""))
	src := threeEndpoints("-2")

	p := h.plan(src, planner.Options{Refresh: true, Targets: []string{"b"}})
	if got, want := actions(p), "a:update b:update"; got != want {
		t.Fatalf("plan --target b = %q, want %q", got, want)
	}
	if !slices.Equal(p.Targets, []string{"b"}) {
		t.Errorf("Targets = %q, want [b]", p.Targets)
	}
	if _, ok := p.Outputs["cId"]; ok {
		t.Errorf("a plan targeting b evaluated the output of c: %v", p.Outputs)
	}
	if _, ok := p.Outputs["bId"]; !ok {
		t.Errorf("a plan targeting b left out the output of b: %v", p.Outputs)
	}
	var text strings.Builder
	if err := render.PlanText(&text, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text.String(), `Targeted plan (--target "b")`) {
		t.Errorf("the text of a targeted plan does not say so:\n%s", text.String())
	}

	// Saved and read back, it applies the same: a and b only.
	saved := signed(t, plan.File{Plan: p}, h.stateKey())
	if !slices.Equal(saved.Plan.Targets, p.Targets) {
		t.Fatalf("saved Targets = %q, want %q", saved.Plan.Targets, p.Targets)
	}
	cBefore := h.record("c")
	func() {
		st, err := state.Open(h.path, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		res, err := apply.Apply(t.Context(), saved.Plan, h.load(src), st, h.reg, apply.Options{Command: "apply"})
		if err != nil || res.Err() != nil || res.Counts[plan.Update] != 2 || !res.Complete() {
			t.Fatalf("apply of the targeted plan: %v, counts %v, failed %v, skipped %v", err, res.Counts, res.Failed, res.Skipped)
		}
	}()
	if got := h.record("c"); got.Serial != cBefore.Serial {
		t.Errorf("the targeted apply wrote c: serial %d, was %d", got.Serial, cBefore.Serial)
	}
	if got := h.record("b").Inputs["displayName"]; got != "second-2" {
		t.Errorf("b displayName = %v, want second-2", got)
	}
	if got, want := actions(h.plan(src, planner.Options{Refresh: true})), "a:no-op b:no-op c:update"; got != want {
		t.Errorf("full plan after the targeted apply = %q, want %q", got, want)
	}
}

// TestPlanTargetDeletes checks that a target the specs no longer declare
// is deleted, and only it.
func TestPlanTargetDeletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(threeEndpoints(""))
	src := resourcesOf(endpoint("a", "first"))
	p := h.plan(src, planner.Options{Refresh: true, Targets: []string{"c"}})
	if got, want := actions(p), "c:delete"; got != want {
		t.Fatalf("plan --target c without c in the specs = %q, want %q", got, want)
	}
}

// TestPlanDestroyTarget checks that a targeted destroy deletes the targets
// and what depends on them, and keeps the rest (lookups included).
func TestPlanDestroyTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := threeEndpoints("") + "variables:\n  me:\n    fn::invoke:\n      function: datadog:getCurrentUser\n"
	h.mustApply(src)
	p, res := h.applyWith(src, planner.Options{Refresh: true, Destroy: true, Targets: []string{"a"}}, apply.Options{Command: "destroy"})
	if got, want := actions(p), "b:delete a:delete"; got != want {
		t.Fatalf("destroy --target a = %q, want %q (b depends on a, and goes first)", got, want)
	}
	if res.Counts[plan.Delete] != 2 || !res.Complete() {
		t.Fatalf("apply: counts %v failed %v", res.Counts, res.Failed)
	}
	recs := h.records()
	for _, name := range []string{"c", "me"} {
		if _, ok := recs[name]; !ok {
			t.Errorf("a targeted destroy of a removed %s from state", name)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, ok := recs[name]; ok {
			t.Errorf("a targeted destroy of a left %s in state", name)
		}
	}
}

// TestPlanReplaceRequested checks --replace: a resource that would not
// change is replaced, with its reason; one already replaced for another
// reason keeps that reason.
func TestPlanReplaceRequested(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := threeEndpoints("")
	h.mustApply(src)
	oldID := h.record("c").ID
	p, res := h.applyWith(src, planner.Options{Refresh: true, Replace: []string{"c"}}, apply.Options{Command: "apply"})
	if got, want := actions(p), "a:no-op b:no-op c:replace"; got != want {
		t.Fatalf("plan --replace c = %q, want %q", got, want)
	}
	if c := change(t, p, "c"); c.Reason != plan.ReasonReplaceRequested || c.ReasonText() != "replacement requested" {
		t.Errorf("reason = %s (%q), want replace_by_request", c.Reason, c.ReasonText())
	}
	if res.Counts[plan.Replace] != 1 || h.record("c").ID == oldID {
		t.Errorf("apply: counts %v, c's id %s (was %s)", res.Counts, h.record("c").ID, oldID)
	}
	if _, ok := h.cloud.object(oldID); ok {
		t.Errorf("the replaced object %s is still in the cloud", oldID)
	}
}

// TestPlanSelectionErrors checks that names that select nothing are
// errors with a suggestion, and --replace of what does not exist yet a
// warning.
func TestPlanSelectionErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("alpha", "first")))
	src := resourcesOf(endpoint("alpha", "first"), endpoint("beta", "second")) + "config:\n  region: {type: string, default: x}\n"
	for _, tc := range []struct {
		opts planner.Options
		want string
	}{
		{planner.Options{Targets: []string{"alpah"}}, `--target "alpah": nothing of that name is declared in the specs or managed in state (did you mean "alpha"?)`},
		{planner.Options{Targets: []string{"region"}}, `--target "region" names a config entry`},
		{planner.Options{Replace: []string{"alpah"}}, `--replace "alpah": no managed resource of that name is declared in the specs (did you mean "alpha"?)`},
		{planner.Options{Targets: []string{"beta"}, Replace: []string{"alpha"}}, `--replace "alpha": it is not among the --target resources and what they depend on; add --target alpha`},
		{planner.Options{Destroy: true, Targets: []string{"beta"}}, `--target "beta": no managed resource of that name in state`},
		{planner.Options{Destroy: true, Replace: []string{"alpha"}}, `--replace "alpha": a destroy plan replaces nothing`},
	} {
		_, diags := h.makePlan(src, tc.opts)
		if !diags.HasErrors() || !strings.Contains(diagText(diags), tc.want) {
			t.Errorf("%+v: diagnostics\n%s\nwant an error %q", tc.opts, diagText(diags), tc.want)
		}
	}
	p, diags := h.makePlan(src, planner.Options{Replace: []string{"beta"}})
	if diags.HasErrors() || !strings.Contains(diagText(diags), `warning: --replace "beta": beta has no object yet`) {
		t.Errorf("--replace of a resource not yet created: %s", diagText(diags))
	}
	if c := change(t, p, "beta"); c.Action != plan.Create {
		t.Errorf("beta: %s, want create", c.Action)
	}
}

// TestPlanTaintRequested checks that a record marked tainted (as 'state
// taint' marks it) is replaced, with words that say so.
func TestPlanTaintRequested(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := threeEndpoints("")
	h.mustApply(src)
	st, err := state.Open(h.path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := h.recordIn(st, "a")
	rec.Tainted = plan.TaintRequested
	if _, err := st.Put(rec); err != nil {
		t.Fatal(err)
	}
	st.Close()
	p := h.plan(src, planner.Options{Refresh: true})
	if got, want := actions(p), "a:replace b:update c:no-op"; got != want {
		t.Fatalf("plan after taint = %q, want %q", got, want)
	}
	if c := change(t, p, "a"); c.Reason != plan.ReasonTainted || c.ReasonText() != plan.TaintRequested {
		t.Errorf("reason %s (%q), want replace_because_tainted saying it was marked", c.Reason, c.ReasonText())
	}
}

// recordIn returns the record name of the open state st.
func (h *harness) recordIn(st *state.Store, name string) state.Record {
	h.t.Helper()
	rec, ok, err := st.Get(name)
	if err != nil || !ok {
		h.t.Fatalf("get %s: %v %v", name, ok, err)
	}
	return rec
}

// TestReplaceKeepingNaturalID checks that the replacement of an object
// known by its inputs that keeps its id deletes the old one first: the
// new one could not be made beside it. One whose id changes is made first.
func TestReplaceKeepingNaturalID(t *testing.T) {
	t.Parallel()
	h := newGoldenHarness(t)
	src := func(rid string) string {
		return resourcesOf(restrictionPolicy("pol", rid, `[{relation: editor, principals: ["role:1"]}]`))
	}
	h.mustApply(src("dashboard:one"))
	p := h.plan(src("dashboard:one"), planner.Options{Refresh: true, Replace: []string{"pol"}})
	if c := change(t, p, "pol"); c.Action != plan.Replace || !c.DeleteBeforeReplace {
		t.Errorf("replace of pol keeping its id: %s, delete first %v; want replace, deleting first", c.Action, c.DeleteBeforeReplace)
	}
	p = h.plan(src("dashboard:two"), planner.Options{Refresh: true})
	if c := change(t, p, "pol"); c.Action != plan.Replace || c.DeleteBeforeReplace {
		t.Errorf("replace of pol with a new id: %s, delete first %v; want replace, creating first", c.Action, c.DeleteBeforeReplace)
	}
}
