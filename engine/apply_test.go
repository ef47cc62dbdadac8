package engine_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// indexOf returns the position of the first call in log equal to call, or -1.
func indexOf(log []string, call string) int {
	return slices.Index(log, call)
}

// newCalls returns the calls of log made after the first n.
func newCalls(log []string, n int) []string {
	return append([]string(nil), log[n:]...)
}

func TestApplyCreateRecordsState(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(
		endpoint("a", "first"),
		endpoint("b", "second", "description: ${a.id}", "freeformTags: {team: ml}"),
	)
	p, res := h.mustApply(src)
	if got, want := actions(p), "a:create b:create"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	b := change(t, p, "b")
	if _, ok := b.After["description"].(value.Unknown); !ok {
		t.Errorf("planned b.description = %#v, want Unknown (a's id is known after apply)", b.After["description"])
	}
	if _, ok := b.After["id"].(value.Unknown); !ok {
		t.Errorf("planned b.id = %#v, want Unknown", b.After["id"])
	}
	if b.Before != nil {
		t.Errorf("planned b.Before = %v, want nil for a create", b.Before)
	}
	if res.Counts[plan.Create] != 2 {
		t.Errorf("counts = %v, want 2 creates", res.Counts)
	}
	recs := h.records()
	ra, rb := recs["a"], recs["b"]
	for _, r := range []state.Record{ra, rb} {
		if r.Kind != kind.Resource || r.Type != endpointToken || r.ID == "" || r.Tainted != "" {
			t.Errorf("record %q = kind %q type %q id %q tainted %q, want a clean managed %s", r.Name, r.Kind, r.Type, r.ID, r.Tainted, endpointToken)
		}
		obj, ok := h.cloud.object(r.ID)
		if !ok {
			t.Errorf("record %q has id %q, which the cloud does not hold (it holds %v)", r.Name, r.ID, h.cloud.ids())
			continue
		}
		if obj["displayName"] != r.Inputs["displayName"] {
			t.Errorf("record %q: displayName %v in state, %v in the cloud", r.Name, r.Inputs["displayName"], obj["displayName"])
		}
	}
	if got := rb.Inputs["description"]; got != ra.ID {
		t.Errorf("b's recorded description = %v, want a's id %q", got, ra.ID)
	}
	if !reflect.DeepEqual(rb.Dependencies, []string{"a"}) {
		t.Errorf("b's dependencies = %v, want [a]", rb.Dependencies)
	}
	if got := rb.Outputs["state"]; got != "ACTIVE" {
		t.Errorf("b's recorded output state = %v, want ACTIVE", got)
	}
	if got := rb.Inputs["inferenceUnits"]; got != int64(1) {
		t.Errorf("b's recorded inferenceUnits = %#v, want the schema default 1", got)
	}

	for _, refresh := range []bool{true, false} {
		p2 := h.plan(src, planner.Options{Refresh: refresh})
		if got, want := actions(p2), "a:no-op b:no-op"; got != want {
			t.Errorf("plan after apply (refresh=%v) = %q, want %q", refresh, got, want)
		}
		if c := change(t, p2, "b"); c.Before["id"] != rb.ID || c.ID != rb.ID {
			t.Errorf("no-op b (refresh=%v): ID %q, Before[id] %v, want %q", refresh, c.ID, c.Before["id"], rb.ID)
		}
	}
}

func TestApplyUpdateInPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "first")))
	id := h.record("a").ID
	calls := len(h.cloud.callLog())

	src := resourcesOf(endpoint("a", "renamed"))
	p, res := h.mustApply(src)
	c := change(t, p, "a")
	if c.Action != plan.Update || len(c.ReplacePaths) != 0 || c.ID != id {
		t.Fatalf("change = %s (replace paths %v, id %q), want an update of %q", c.Action, c.ReplacePaths, c.ID, id)
	}
	if c.Before["displayName"] != "first" || c.After["displayName"] != "renamed" {
		t.Errorf("displayName before/after = %v/%v, want first/renamed", c.Before["displayName"], c.After["displayName"])
	}
	if c.After["id"] != id {
		t.Errorf("after id = %v, want the kept id %q", c.After["id"], id)
	}
	if got, want := newCalls(h.cloud.callLog(), calls), []string{"update " + id}; !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if res.Counts[plan.Update] != 1 {
		t.Errorf("counts = %v, want 1 update", res.Counts)
	}
	r := h.record("a")
	if r.ID != id || r.Inputs["displayName"] != "renamed" {
		t.Errorf("record = id %q displayName %v, want %q renamed", r.ID, r.Inputs["displayName"], id)
	}
	if obj, _ := h.cloud.object(id); obj["displayName"] != "renamed" {
		t.Errorf("cloud displayName = %v, want renamed", obj["displayName"])
	}
	if p := h.plan(src, planner.Options{Refresh: true}); p.HasChanges() {
		t.Errorf("plan after the update = %q, want no changes", actions(p))
	}
}

func TestApplyReplace(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		options           []string
		deleteFirst       bool
		wantReplacePaths  []string
		wantReasonContain string
	}{
		"replaceOnChanges creates first": {
			options:          []string{"options.replaceOnChanges: [modelId]"},
			wantReplacePaths: []string{"modelId"},
		},
		"replaceOnChanges in snake_case": {
			options:          []string{"options.replaceOnChanges: [model_id]"},
			wantReplacePaths: []string{"modelId"},
		},
		"deleteBeforeReplace deletes first": {
			options:          []string{"options.replaceOnChanges: [modelId]", "options.deleteBeforeReplace: true"},
			deleteFirst:      true,
			wantReplacePaths: []string{"modelId"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.mustApply(resourcesOf(endpoint("a", "first", tc.options...)))
			old := h.record("a").ID
			calls := len(h.cloud.callLog())

			src := resourcesOf(endpoint("a", "first", append([]string{"modelId: ocid1.ailanguagemodel.oc1..m2"}, tc.options...)...))
			p, res := h.mustApply(src)
			c := change(t, p, "a")
			if c.Action != plan.Replace {
				t.Fatalf("action = %s, want replace", c.Action)
			}
			if !reflect.DeepEqual(c.ReplacePaths, tc.wantReplacePaths) {
				t.Errorf("ReplacePaths = %v, want %v", c.ReplacePaths, tc.wantReplacePaths)
			}
			if c.Reason != plan.ReasonReplaceOnChanges || !strings.Contains(c.ReasonText(), `"modelId"`) {
				t.Errorf("Reason = %s (%q), want replace_because_replace_on_changes naming \"modelId\"", c.Reason, c.ReasonText())
			}
			if c.DeleteBeforeReplace != tc.deleteFirst {
				t.Errorf("DeleteBeforeReplace = %v, want %v", c.DeleteBeforeReplace, tc.deleteFirst)
			}
			if c.Before["modelId"] != "ocid1.ailanguagemodel.oc1..m1" || c.After["modelId"] != "ocid1.ailanguagemodel.oc1..m2" {
				t.Errorf("modelId before/after = %v/%v", c.Before["modelId"], c.After["modelId"])
			}

			log := newCalls(h.cloud.callLog(), calls)
			want := []string{"create first", "delete " + old}
			if tc.deleteFirst {
				want = []string{"delete " + old, "create first"}
			}
			if !reflect.DeepEqual(log, want) {
				t.Errorf("calls = %q, want %q", log, want)
			}
			if res.Counts[plan.Replace] != 1 || res.Counts[plan.Create] != 0 || res.Counts[plan.Delete] != 0 {
				t.Errorf("counts = %v, want exactly 1 replace", res.Counts)
			}
			r := h.record("a")
			if r.ID == old || r.ID == "" || len(r.Deposed) != 0 {
				t.Errorf("record = id %q deposed %v, want a new id and nothing deposed (old %q)", r.ID, r.Deposed, old)
			}
			if r.Inputs["modelId"] != "ocid1.ailanguagemodel.oc1..m2" {
				t.Errorf("recorded modelId = %v, want m2", r.Inputs["modelId"])
			}
			if _, ok := h.cloud.object(old); ok {
				t.Errorf("old object %q still exists", old)
			}
			if _, ok := h.cloud.object(r.ID); !ok {
				t.Errorf("new object %q does not exist", r.ID)
			}
			if p := h.plan(src, planner.Options{Refresh: true}); p.HasChanges() {
				t.Errorf("plan after the replace = %q, want no changes", actions(p))
			}
		})
	}
}

func TestApplyReplacesTaintedObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.taintCreate = func(resources.Attrs) error { return resources.Unusable(errors.New("endpoint FAILED: out of capacity")) }
	src := resourcesOf(endpoint("a", "first"), endpoint("b", "second", "description: ${a.id}"))
	_, res := h.apply(src)
	if len(res.Failed) != 1 || res.Failed[0].Addr != "a" || !strings.Contains(res.Failed[0].Err.Error(), "out of capacity") {
		t.Fatalf("failed = %v, want a failing with the driver's error", res.Failed)
	}
	if !reflect.DeepEqual(res.Skipped, []string{"b"}) {
		t.Errorf("skipped = %v, want [b]", res.Skipped)
	}
	tainted := h.record("a")
	if tainted.ID == "" || !strings.Contains(tainted.Tainted, "out of capacity") {
		t.Fatalf("record = id %q tainted %q, want the failed object's id and the cause", tainted.ID, tainted.Tainted)
	}
	if _, ok := h.records()["b"]; ok {
		t.Errorf("b is in state, want it skipped")
	}

	h.cloud.taintCreate = nil
	p := h.plan(src, planner.Options{Refresh: true})
	if got, want := actions(p), "a:replace b:create"; got != want {
		t.Fatalf("plan after the failed create = %q, want %q", got, want)
	}
	if c := change(t, p, "a"); c.Reason != plan.ReasonTainted || !strings.Contains(c.ReasonDetail, "out of capacity") {
		t.Errorf("reason = %s (%q), want replace_because_tainted saying why", c.Reason, c.ReasonDetail)
	}
	calls := len(h.cloud.callLog())
	h.mustApply(src)
	log := newCalls(h.cloud.callLog(), calls)
	if ci, di := indexOf(log, "create first"), indexOf(log, "delete "+tainted.ID); ci < 0 || di < 0 || ci > di {
		t.Errorf("calls = %q, want create first, then delete %s", log, tainted.ID)
	}
	r := h.record("a")
	if r.ID == tainted.ID || r.Tainted != "" || len(r.Deposed) != 0 {
		t.Errorf("record = id %q tainted %q deposed %v, want a clean new object", r.ID, r.Tainted, r.Deposed)
	}
	if _, ok := h.cloud.object(tainted.ID); ok {
		t.Errorf("the tainted object %q still exists", tainted.ID)
	}
	if got := h.record("b").Inputs["description"]; got != r.ID {
		t.Errorf("b's description = %v, want the new id %q", got, r.ID)
	}
}

func TestApplyDeletesInReverseDependencyOrder(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		destroy bool
	}{
		"removed from the specs": {},
		"destroy":                {destroy: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			full := resourcesOf(
				endpoint("a", "a"),
				endpoint("b", "b", "description: ${a.id}"),
				endpoint("c", "c", "description: ${b.id}"),
				endpoint("d", "d", "options.dependsOn: ['${a}']"),
				endpoint("keep", "keep"),
			)
			h.mustApply(full)
			recs := h.records()
			calls := len(h.cloud.callLog())

			var p *plan.Plan
			var res *report.Apply
			if tc.destroy {
				p, res = h.destroy(full)
			} else {
				p, res = h.apply(resourcesOf(endpoint("keep", "keep")))
			}
			if res.Err() != nil {
				t.Fatalf("apply: %v", res.Failed)
			}
			wantDeleted := []string{"a", "b", "c", "d"}
			if tc.destroy {
				wantDeleted = append(wantDeleted, "keep")
			}
			pos := map[string]int{}
			for i, c := range p.Changes {
				if c.Action == plan.Delete {
					pos[c.Addr] = i
				} else if c.Action != plan.NoOp {
					t.Errorf("change %s: %s, want only deletes and no-ops", c.Addr, c.Action)
				}
			}
			if len(pos) != len(wantDeleted) {
				t.Errorf("plan = %q, want deletes of %v", actions(p), wantDeleted)
			}
			log := newCalls(h.cloud.callLog(), calls)
			for _, edge := range [][2]string{{"b", "a"}, {"c", "b"}, {"d", "a"}} {
				dependent, dependency := edge[0], edge[1]
				if pos[dependent] > pos[dependency] {
					t.Errorf("plan lists %s's delete after %s's, want dependents first: %q", dependent, dependency, actions(p))
				}
				di, ai := indexOf(log, "delete "+recs[dependent].ID), indexOf(log, "delete "+recs[dependency].ID)
				if di < 0 || ai < 0 || di > ai {
					t.Errorf("calls = %q, want %s (%s) deleted before %s (%s)", log, dependent, recs[dependent].ID, dependency, recs[dependency].ID)
				}
			}
			if res.Counts[plan.Delete] != len(wantDeleted) {
				t.Errorf("counts = %v, want %d deletes", res.Counts, len(wantDeleted))
			}
			left := h.records()
			for _, name := range wantDeleted {
				if _, ok := left[name]; ok {
					t.Errorf("%s is still in state", name)
				}
				if _, ok := h.cloud.object(recs[name].ID); ok {
					t.Errorf("%s (%s) still exists in the cloud", name, recs[name].ID)
				}
			}
			if !tc.destroy {
				if _, ok := left["keep"]; !ok {
					t.Errorf("keep is gone from state")
				}
			}
		})
	}
}

func TestApplyGetIsReadNotManaged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.cloud.put("ocid1.legacy", resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
		"displayName": "legacy-name", "inferenceUnits": 3, "state": "ACTIVE"})
	src := `
resources:
  legacy:
    type: oci:AiLanguage:Endpoint
    get:
      id: ocid1.legacy
` + endpoint("a", "a", "description: ${legacy.display_name}", "inferenceUnits: ${legacy.inferenceUnits}")
	p, res := h.mustApply(src)
	if got, want := actions(p), "legacy:read a:create"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	g := change(t, p, "legacy")
	if g.Kind != kind.Get || g.ID != "ocid1.legacy" || g.Deferred || g.After["displayName"] != "legacy-name" {
		t.Errorf("get change = kind %q id %q deferred %v after %v, want the live object read during plan", g.Kind, g.ID, g.Deferred, g.After)
	}
	a := change(t, p, "a")
	if a.After["description"] != "legacy-name" || a.After["inferenceUnits"] != int64(3) {
		t.Errorf("a's planned description, inferenceUnits = %v, %#v, want the get's outputs", a.After["description"], a.After["inferenceUnits"])
	}
	if res.Counts[plan.Create] != 1 {
		t.Errorf("counts = %v, want 1 create", res.Counts)
	}
	for _, call := range h.cloud.callLog() {
		if strings.Contains(call, "legacy") {
			t.Errorf("call %q touched the get resource", call)
		}
	}
	r := h.record("legacy")
	if r.Kind != kind.Get || r.ID != "ocid1.legacy" || r.Outputs["displayName"] != "legacy-name" {
		t.Errorf("get record = kind %q id %q outputs %v", r.Kind, r.ID, r.Outputs)
	}
	if deps := h.record("a").Dependencies; !reflect.DeepEqual(deps, []string{"legacy"}) {
		t.Errorf("a's dependencies = %v, want [legacy]", deps)
	}
	// Removing the get from the specs deletes nothing.
	calls := len(h.cloud.callLog())
	p, _ = h.mustApply(resourcesOf(endpoint("a", "a", "description: legacy-name", "inferenceUnits: 3")))
	if p.HasChanges() {
		t.Errorf("plan without the get = %q, want no changes", actions(p))
	}
	if log := newCalls(h.cloud.callLog(), calls); len(log) != 0 {
		t.Errorf("calls = %q, want none", log)
	}
	if _, ok := h.cloud.object("ocid1.legacy"); !ok {
		t.Errorf("the object read with get was deleted")
	}
}

func TestApplyImport(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		displayName string
		wantReason  string
		wantUpdate  bool
	}{
		"specs match the object": {displayName: "old", wantReason: ""},
		"specs differ":           {displayName: "new", wantReason: `then updated in place: "displayName"`, wantUpdate: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.cloud.put("ocid1.existing", resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "old", "inferenceUnits": 1, "state": "ACTIVE"})
			src := resourcesOf(endpoint("a", tc.displayName, "options.import: ocid1.existing"))

			p, res := h.mustApply(src)
			c := change(t, p, "a")
			if c.Action != plan.Import || c.ImportID != "ocid1.existing" || c.ReasonText() != tc.wantReason {
				t.Fatalf("change = %s import %q reason %q, want import of ocid1.existing, reason %q", c.Action, c.ImportID, c.ReasonText(), tc.wantReason)
			}
			if c.Before["displayName"] != "old" || c.After["displayName"] != tc.displayName {
				t.Errorf("displayName before/after = %v/%v, want old/%s", c.Before["displayName"], c.After["displayName"], tc.displayName)
			}
			var want []string
			if tc.wantUpdate {
				want = []string{"update ocid1.existing"}
			}
			if log := h.cloud.callLog(); !reflect.DeepEqual(log, want) {
				t.Errorf("calls = %q, want %q", log, want)
			}
			if res.Counts[plan.Import] != 1 {
				t.Errorf("counts = %v, want 1 import", res.Counts)
			}
			r := h.record("a")
			if r.ID != "ocid1.existing" || r.Inputs["displayName"] != tc.displayName || r.Kind != kind.Resource {
				t.Errorf("record = kind %q id %q displayName %v", r.Kind, r.ID, r.Inputs["displayName"])
			}
			if obj, _ := h.cloud.object("ocid1.existing"); obj["displayName"] != tc.displayName {
				t.Errorf("cloud displayName = %v, want %s", obj["displayName"], tc.displayName)
			}
			if p := h.plan(src, planner.Options{Refresh: true}); p.HasChanges() {
				t.Errorf("plan after the import = %q, want no changes", actions(p))
			}
		})
	}
}

func TestApplyRetainOnDeleteForgets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a", "options.retainOnDelete: true")))
	r := h.record("a")
	if !r.RetainOnDelete {
		t.Fatalf("record.RetainOnDelete = false, want true")
	}
	calls := len(h.cloud.callLog())
	p, res := h.mustApply(resourcesOf(endpoint("b", "b")))
	c := change(t, p, "a")
	if c.Action != plan.Forget || c.Reason != plan.ReasonRetainOnDelete {
		t.Errorf("change = %s (%s), want forget because of retainOnDelete", c.Action, c.Reason)
	}
	if log := newCalls(h.cloud.callLog(), calls); !reflect.DeepEqual(log, []string{"create b"}) {
		t.Errorf("calls = %q, want only the create of b", log)
	}
	if _, ok := h.cloud.object(r.ID); !ok {
		t.Errorf("object %q was deleted, want it kept", r.ID)
	}
	if _, ok := h.records()["a"]; ok {
		t.Errorf("a is still in state, want it forgotten")
	}
	if res.Counts[plan.Forget] != 1 {
		t.Errorf("counts = %v, want 1 forget", res.Counts)
	}
}

func TestApplyIgnoreChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "first", "options.ignoreChanges: [displayName]")))
	id := h.record("a").ID

	p := h.plan(resourcesOf(endpoint("a", "second", "options.ignoreChanges: [displayName]")), planner.Options{Refresh: true})
	if got := actions(p); got != "a:no-op" {
		t.Errorf("plan with only an ignored change = %q, want a:no-op", got)
	}

	src := resourcesOf(endpoint("a", "second", "description: now described", "options.ignoreChanges: [display_name]"))
	p, _ = h.mustApply(src)
	c := change(t, p, "a")
	if c.Action != plan.Update || c.After["displayName"] != "first" || c.After["description"] != "now described" {
		t.Errorf("change = %s, after displayName %v description %v, want an update keeping displayName first", c.Action, c.After["displayName"], c.After["description"])
	}
	obj, _ := h.cloud.object(id)
	if obj["displayName"] != "first" || obj["description"] != "now described" {
		t.Errorf("cloud = displayName %v description %v, want first, now described", obj["displayName"], obj["description"])
	}
	if r := h.record("a"); r.Inputs["displayName"] != "first" {
		t.Errorf("recorded displayName = %v, want the prior value first", r.Inputs["displayName"])
	}
	if p := h.plan(src, planner.Options{Refresh: true}); p.HasChanges() {
		t.Errorf("plan after the update = %q, want no changes", actions(p))
	}
}

func TestApplyLookups(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
  policy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        service_name: ${a.id}
  etag:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: known.endpoints.example.cloud.goog
      return: etag
` + resourcesOf(
		endpoint("a", "a", "description: ${me.email}"),
		endpoint("b", "b", "description: ${policy.etag}", "freeformTags: {etag: '${etag}'}"),
	) + `
outputs:
  policyId: ${policy.id}
`
	p := h.plan(src, planner.Options{})
	if got, want := actions(p), "etag:read me:read a:create policy:read b:create"; got != want {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	me := change(t, p, "me")
	if me.Deferred || me.Kind != kind.Lookup || me.After["email"] != "ada@example.com" {
		t.Errorf("me = deferred %v kind %q after %v, want read during plan", me.Deferred, me.Kind, me.After)
	}
	if a := change(t, p, "a"); a.After["description"] != "ada@example.com" {
		t.Errorf("a's planned description = %v, want the lookup's email", a.After["description"])
	}
	pol := change(t, p, "policy")
	if !pol.Deferred || pol.Reason != plan.ReasonReadDeferred {
		t.Errorf("policy = deferred %v reason %s, want deferred to apply, read_because_dependency_pending", pol.Deferred, pol.Reason)
	}
	if _, ok := pol.After["serviceName"].(value.Unknown); !ok {
		t.Errorf("policy's planned serviceName = %#v, want Unknown", pol.After["serviceName"])
	}
	b := change(t, p, "b")
	if _, ok := b.After["description"].(value.Unknown); !ok {
		t.Errorf("b's planned description = %#v, want Unknown", b.After["description"])
	}
	if got := b.After["freeformTags"]; !reflect.DeepEqual(got, map[string]any{"etag": "etag-of-known.endpoints.example.cloud.goog"}) {
		t.Errorf("b's planned freeformTags = %v, want the etag returned by the direct lookup", got)
	}
	if _, ok := p.Outputs["policyId"].(value.Unknown); !ok {
		t.Errorf("planned output policyId = %#v, want Unknown", p.Outputs["policyId"])
	}
	if n, m := len(h.user.invocations()), len(h.iam.invocations()); n != 1 || m != 1 {
		t.Errorf("during plan: getCurrentUser called %d times, getServiceIamPolicy %d times; want 1 and 1 (the deferred one not yet)", n, m)
	}

	_, res := h.mustApply(src)
	a := h.record("a")
	calls := h.iam.invocations()
	if len(calls) != 3 || calls[2]["serviceName"] != a.ID {
		t.Fatalf("getServiceIamPolicy calls = %v, want the third with serviceName %q", calls, a.ID)
	}
	if got := h.record("b").Inputs["description"]; got != "etag-of-"+a.ID {
		t.Errorf("b's description = %v, want the deferred lookup's etag", got)
	}
	if res.Outputs["policyId"] != "services/"+a.ID {
		t.Errorf("output policyId = %v, want services/%s", res.Outputs["policyId"], a.ID)
	}
	for _, name := range []string{"me", "policy"} {
		if r := h.record(name); r.Kind != kind.Lookup || r.ID == "" {
			t.Errorf("record %q = kind %q id %q, want a lookup record", name, r.Kind, r.ID)
		}
	}
}

func TestApplyPartialFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var rs []string
	for _, chain := range []string{"x", "y", "z"} {
		rs = append(rs, endpoint(chain+"1", chain+"1"))
		for i := 2; i <= 3; i++ {
			rs = append(rs, endpoint(fmt.Sprintf("%s%d", chain, i), fmt.Sprintf("%s%d", chain, i), fmt.Sprintf("description: ${%s%d.id}", chain, i-1)))
		}
	}
	src := resourcesOf(rs...)
	h.cloud.failCreate = func(want resources.Attrs) error {
		if want["displayName"] == "y2" {
			return errors.New("quota exceeded")
		}
		return nil
	}
	_, res := h.applyWith(src, planner.Options{Refresh: true}, apply.Options{Parallelism: 2})
	if len(res.Failed) != 1 || res.Failed[0].Addr != "y2" || !strings.Contains(res.Failed[0].Err.Error(), "quota exceeded") {
		t.Fatalf("failed = %v, want y2 with the driver's error", res.Failed)
	}
	if res.Failed[0].Pos.Line == 0 {
		t.Errorf("failure of y2 has no position in the specs")
	}
	if !reflect.DeepEqual(res.Skipped, []string{"y3"}) {
		t.Errorf("skipped = %v, want [y3]", res.Skipped)
	}
	if res.Counts[plan.Create] != 7 {
		t.Errorf("counts = %v, want 7 creates", res.Counts)
	}
	if res.Err() == nil {
		t.Errorf("result error = nil, want one")
	}
	recs := h.records()
	for _, name := range []string{"x1", "x2", "x3", "y1", "z1", "z2", "z3"} {
		r, ok := recs[name]
		if !ok {
			t.Errorf("%s is not in state", name)
			continue
		}
		if _, ok := h.cloud.object(r.ID); !ok {
			t.Errorf("%s's id %q is not in the cloud", name, r.ID)
		}
	}
	for _, name := range []string{"y2", "y3"} {
		if _, ok := recs[name]; ok {
			t.Errorf("%s is in state, want it absent", name)
		}
	}
	if n := len(h.cloud.ids()); n != 7 {
		t.Errorf("the cloud holds %d objects, want 7", n)
	}

	h.cloud.failCreate = nil
	p := h.plan(src, planner.Options{Refresh: true})
	var work []string
	for _, c := range p.Changes {
		if c.Action != plan.NoOp {
			work = append(work, c.Addr+":"+c.Action.String())
		}
	}
	if want := []string{"y2:create", "y3:create"}; !reflect.DeepEqual(work, want) {
		t.Errorf("plan after the failure = %q, want only %q", work, want)
	}
	_, res = h.mustApply(src)
	if res.Counts[plan.Create] != 2 {
		t.Errorf("second apply counts = %v, want 2 creates", res.Counts)
	}
}

func TestApplyRecordsEachCreate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	n := 0
	h.cloud.failCreate = func(resources.Attrs) error {
		if n++; n == 3 {
			// A refusal: the API made nothing, so no intent is left. (An
			// error that leaves it unknown keeps the intent: see
			// TestApplyKeepsIntentOfUnknownOutcome.)
			return resources.Refused(&resources.APIError{Service: "oci", Status: 400, Code: "InvalidParameter", Message: "no"})
		}
		return nil
	}
	src := resourcesOf(
		endpoint("a", "a"),
		endpoint("b", "b", "description: ${a.id}"),
		endpoint("c", "c", "description: ${b.id}"),
		endpoint("d", "d", "description: ${c.id}"),
	)
	_, res := h.applyWith(src, planner.Options{}, apply.Options{Parallelism: 1})
	if len(res.Failed) != 1 || res.Failed[0].Addr != "c" {
		t.Fatalf("failed = %v, want c", res.Failed)
	}
	recs := h.records()
	for _, name := range []string{"a", "b"} {
		r, ok := recs[name]
		if !ok || r.ID == "" {
			t.Errorf("%s is not recorded with its id (%+v)", name, r)
			continue
		}
		if _, ok := h.cloud.object(r.ID); !ok {
			t.Errorf("%s's recorded id %q is not in the cloud", name, r.ID)
		}
	}
	if _, ok := recs["c"]; ok {
		t.Errorf("c is recorded, want it absent after its create failed")
	}
	if ins := h.intents(); len(ins) != 0 {
		t.Errorf("intents = %v, want none left behind", ins)
	}
	hist := h.history()
	if len(hist) != 1 {
		t.Fatalf("history = %v, want one entry", hist)
	}
	if got := hist[0].Counts; got != (state.Counts{Create: 2, Failed: 1, Skipped: 1}) {
		t.Errorf("history counts = %v, want 2 creates, 1 failed, 1 skipped", got)
	}
}

func TestApplySkipsDeletesOfDependencies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a"), endpoint("b", "b", "description: ${a.id}"), endpoint("keep", "keep")))
	b := h.record("b")
	h.cloud.failDelete = func(id string) error {
		if id == b.ID {
			return errors.New("conflict")
		}
		return nil
	}
	_, res := h.apply(resourcesOf(endpoint("keep", "keep")))
	if len(res.Failed) != 1 || res.Failed[0].Addr != "b" {
		t.Fatalf("failed = %v, want b", res.Failed)
	}
	if !reflect.DeepEqual(res.Skipped, []string{"a"}) {
		t.Errorf("skipped = %v, want [a]: its dependent b could not be deleted", res.Skipped)
	}
	recs := h.records()
	if _, ok := recs["a"]; !ok {
		t.Errorf("a is gone from state, want it kept until b is deleted")
	}
	if _, ok := recs["b"]; !ok {
		t.Errorf("b is gone from state, want it kept after its delete failed")
	}
}

// A replaced object whose delete failed stays recorded as deposed and is
// deleted by the next apply, never forgotten.
func TestApplyRetriesDeposedDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	opts := "options.replaceOnChanges: [modelId]"
	h.mustApply(resourcesOf(endpoint("a", "a", opts)))
	old := h.record("a").ID
	h.cloud.failDelete = func(id string) error { return errors.New("busy") }
	src := resourcesOf(endpoint("a", "a", "modelId: ocid1.ailanguagemodel.oc1..m2", opts))
	_, res := h.apply(src)
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), "busy") {
		t.Fatalf("failed = %v, want the delete of the replaced object", res.Failed)
	}
	if want := []report.Deposed{{Addr: "a", Type: endpointToken, IDs: []string{old}}}; !reflect.DeepEqual(res.Deposed, want) {
		t.Errorf("deposed = %+v, want %+v", res.Deposed, want)
	}
	r := h.record("a")
	if r.ID == old || !reflect.DeepEqual(r.Deposed, []string{old}) {
		t.Fatalf("record = id %q deposed %v, want a new id and %q deposed", r.ID, r.Deposed, old)
	}
	h.cloud.failDelete = nil
	p := h.plan(src, planner.Options{Refresh: true})
	if c := change(t, p, "a"); c.Action != plan.NoOp || !reflect.DeepEqual(c.Deposed, []string{old}) || !p.HasChanges() {
		t.Errorf("plan = %s with deposed %v, has changes %v; want a no-op that still destroys %q", c.Action, c.Deposed, p.HasChanges(), old)
	}
	var text strings.Builder
	if err := render.PlanText(&text, p, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "deposed object \""+old+"\"") || !strings.Contains(text.String(), "1 to destroy") {
		t.Errorf("rendered plan does not show the deposed object's destruction:\n%s", text.String())
	}
	h.mustApply(src)
	if _, ok := h.cloud.object(old); ok {
		t.Errorf("the replaced object %q still exists after the next apply", old)
	}
	if r := h.record("a"); len(r.Deposed) != 0 {
		t.Errorf("record still lists deposed %v", r.Deposed)
	}
}

// A lookup's record holds its arguments as inputs, so that drift can read
// it again, and its results as outputs.
func TestApplyRecordsLookupArguments(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `
variables:
  direct:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: known.endpoints.example.cloud.goog
  deferred:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${a.id}
` + resourcesOf(endpoint("a", "a", "description: ${direct.etag}"), endpoint("b", "b", "description: ${deferred.etag}"))
	h.mustApply(src)
	a := h.record("a")
	for name, want := range map[string]string{"direct": "known.endpoints.example.cloud.goog", "deferred": a.ID} {
		r := h.record(name)
		if !reflect.DeepEqual(r.Inputs, map[string]any{"serviceName": want}) {
			t.Errorf("%s: recorded inputs %v, want the arguments {serviceName: %s}", name, r.Inputs, want)
		}
		if r.Outputs["etag"] != "etag-of-"+want || r.ID != "services/"+want {
			t.Errorf("%s: recorded id %q outputs %v, want the lookup's results", name, r.ID, r.Outputs)
		}
	}
	for _, args := range h.iam.invocations() {
		if len(args) != 1 {
			t.Errorf("getServiceIamPolicy called with %v, want only serviceName", args)
		}
	}
}

// TestDestroyForgetsLookups checks that a destroy plan reads nothing and
// that, once every managed resource is gone, state holds nothing either.
func TestDestroyForgetsLookups(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := `
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
` + resourcesOf(endpoint("a", "owned-by-${me.id}"))
	h.mustApply(spec)
	if recs := h.records(); len(recs) != 2 {
		t.Fatalf("after apply, state = %v, want the endpoint and the lookup", recs)
	}
	p, res := h.destroy(spec)
	for _, c := range p.Changes {
		if c.Action == plan.Read {
			t.Errorf("destroy plan reads %s; a destroy should only delete", c.Addr)
		}
	}
	if res.Err() != nil {
		t.Fatalf("destroy failed: %v", res.Failed)
	}
	if recs := h.records(); len(recs) != 0 {
		t.Errorf("after destroy, state = %v, want empty", recs)
	}
}

// TestApplyConsume checks that an apply that drops the planned values of
// what it has carried out (apply.Options.Consume), of a plan that packed
// its creates (planner.Options.Pack), as the CLI applies, writes the same
// state as one that keeps them, through creates, an update and a
// replacement that creates first, whose deposed node still reads its
// change; so does one whose planner keeps the records' values for it, as
// the CLI applies on etcd.
func TestApplyConsume(t *testing.T) {
	t.Parallel()
	steps := []string{
		resourcesOf(endpoint("a", "first"), endpoint("b", "second", "description: ${a.id}", "options.replaceOnChanges: [modelId]")),
		resourcesOf(endpoint("a", "renamed"), endpoint("b", "second", "description: ${a.id}", "modelId: ocid1.ailanguagemodel.oc1..m2", "options.replaceOnChanges: [modelId]")),
	}
	kept, consumed, onEtcd := newHarness(t), newHarness(t), newHarness(t)
	for i, src := range steps {
		_, want := kept.applyWith(src, planner.Options{Refresh: true}, apply.Options{Command: "apply"})
		p, got := consumeApply(t, consumed, src)
		// As the CLI applies on etcd: the records' values kept, not read
		// again.
		_, gotKept, _ := consumeApplyKept(t, onEtcd, src, true)
		if got.Err() != nil || want.Err() != nil || gotKept.Err() != nil || !reflect.DeepEqual(got.Counts, want.Counts) || !reflect.DeepEqual(gotKept.Counts, want.Counts) {
			t.Fatalf("step %d: consumed %v %v, values kept %v %v, kept %v %v", i, got.Counts, got.Err(), gotKept.Counts, gotKept.Err(), want.Counts, want.Err())
		}
		for name, rec := range kept.records() {
			for _, other := range []state.Record{consumed.records()[name], onEtcd.records()[name]} {
				if !reflect.DeepEqual(rec.Inputs, other.Inputs) || !reflect.DeepEqual(rec.Outputs, other.Outputs) || rec.ID != other.ID || !reflect.DeepEqual(rec.Deposed, other.Deposed) {
					t.Errorf("step %d: %s recorded %+v, want %+v", i, name, other, rec)
				}
			}
		}
		a, b := change(t, p, "a"), change(t, p, "b")
		if a.After != nil || a.Action == plan.NoOp {
			t.Errorf("step %d: a (%s) keeps After %v", i, a.Action, a.After)
		}
		if i == 1 && (b.Action != plan.Replace || b.After == nil) {
			t.Errorf("step 1: b is %s with After %v, want a replacement keeping its values for its deposed node", b.Action, b.After)
		}
	}
}

// consumeApply applies src on h as the CLI's apply does: the records
// listed once before the plan are the plan's and the apply's
// (planner.Options.Records, apply.Options.Records), the planner letting
// the values of those it planned go, and the apply consumes the plan and
// the specs. It checks that the specs keep no
// inputs expression of what ran, and that planning them again is an
// error, not a crash.
func consumeApply(t *testing.T, h *harness, src string) (*plan.Plan, *report.Apply) {
	t.Helper()
	p, res, _ := consumeApplyKept(t, h, src, false)
	return p, res
}

// consumeApplyKept is consumeApply, and returns the resources whose
// inputs the planner kept for the apply (planner.Options.KeepInputs),
// letting their expressions go. With keepValues, the planner keeps the
// values of the records for the apply, as the CLI does on etcd
// (planner.Options.KeepRecordValues).
func consumeApplyKept(t *testing.T, h *harness, src string, keepValues bool) (*plan.Plan, *report.Apply, []string) {
	t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	records, err := state.ListLazy(st)
	if err != nil {
		t.Fatal(err)
	}
	spec := h.load(src)
	p, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{Refresh: true, Pack: true, KeepInputs: true, Records: records, KeepRecordValues: keepValues})
	if diags.HasErrors() {
		t.Fatalf("plan: %v", diags.Err())
	}
	var kept []string
	for i := range p.Changes {
		c := &p.Changes[i]
		in, ok, err := c.KeptInputs()
		if r := spec.Resources[c.Addr]; ok && (err != nil || r == nil || r.Inputs() != nil || value.ContainsUnknown(in)) {
			t.Errorf("%s: kept inputs %v (%v), its inputs expression still held: %v", c.Addr, in, err, r != nil && r.Inputs() != nil)
		}
		if ok {
			kept = append(kept, c.Addr)
		}
	}
	for i := range records {
		if r := spec.Resources[records[i].Head.Name]; r != nil && r.Type == records[i].Head.Type && records[i].Dropped() == keepValues {
			t.Errorf("%s's record: let go %v, with KeepRecordValues %v", r.Name, records[i].Dropped(), keepValues)
		}
	}
	res, err := apply.Apply(t.Context(), p, spec, st, h.reg, apply.Options{Command: "apply", Consume: true, Records: records})
	if err != nil {
		t.Fatal(err)
	}
	h.checkInvariants(st, res)
	for _, c := range p.Changes {
		if r := spec.Resources[c.Addr]; r != nil && c.Action != plan.Delete && !c.Idle && r.Inputs() != nil {
			t.Errorf("after a consuming apply, %s (%s) keeps its inputs expression", c.Addr, c.Action)
		}
	}
	if _, diags := planner.Plan(t.Context(), spec, st, h.reg, planner.Options{}); !diags.HasErrors() || !strings.Contains(diagText(diags), "load the specs again") {
		t.Errorf("planning consumed specs again: %s; want an error saying to load them again", diagText(diags))
	}
	slices.Sort(kept)
	return p, res, kept
}

// maskSealed returns m with each sealed value (a digest of a secret) as
// "sealed".
func maskSealed(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if value.IsSealed(v) {
			v = "sealed"
		}
		out[k] = v
	}
	return out
}

// TestApplyKeptInputs checks that an apply sending the inputs the planner
// kept (planner.Options.KeepInputs), as the CLI applies, writes what one
// that evaluates every resource's inputs again writes, and that the
// planner keeps only inputs that the apply would evaluate to the same:
// known, without a secret, reading only ids of resources whose object
// stays (not an input of one, an output, nor the id of one replaced).
func TestApplyKeptInputs(t *testing.T) {
	t.Parallel()
	steps := []struct {
		src  string
		kept []string
	}{{
		resourcesOf(endpoint("a", "a", "options.replaceOnChanges: [modelId]"), endpoint("b", "b", "description: ${a.id}"), endpoint("c", "c", "description: ${a.displayName}"),
			endpoint("d", "d", "description: ${a.state}"), endpoint("e", "e", "description: {fn::secret: kept-inputs-secret}", "options.dependsOn: ['${a}']")),
		[]string{"a"}, // the others read a, made by this apply
	}, {
		resourcesOf(endpoint("a", "renamed", "options.replaceOnChanges: [modelId]"), endpoint("b", "b2", "description: ${a.id}"), endpoint("c", "c2", "description: ${a.displayName}"),
			endpoint("d", "d2", "description: ${a.state}"), endpoint("e", "e2", "description: {fn::secret: kept-inputs-secret}", "options.dependsOn: ['${a}']"), endpoint("f", "f", "description: x-${a.id}")),
		[]string{"a", "b", "f"},
	}, {
		resourcesOf(endpoint("a", "renamed", "modelId: ocid1.ailanguagemodel.oc1..m2", "options.replaceOnChanges: [modelId]"), endpoint("b", "b3", "description: ${a.id}"),
			endpoint("c", "c2", "description: ${a.displayName}"), endpoint("d", "d2", "description: ${a.state}"), endpoint("e", "e2", "description: {fn::secret: kept-inputs-secret}", "options.dependsOn: ['${a}']"), endpoint("f", "f", "description: x-${a.id}")),
		[]string{"a"}, // a is replaced: its new id is not known
	}}
	// e waits for a, so that a, which others read the id of, is the
	// first object made in both.
	evaluated, kept := newHarness(t), newHarness(t)
	for i, step := range steps {
		_, want := evaluated.applyWith(step.src, planner.Options{Refresh: true}, apply.Options{Command: "apply"})
		_, got, keptNames := consumeApplyKept(t, kept, step.src, false)
		if got.Err() != nil || want.Err() != nil || !reflect.DeepEqual(got.Counts, want.Counts) {
			t.Fatalf("step %d: kept %v %v, evaluated %v %v", i, got.Counts, got.Err(), want.Counts, want.Err())
		}
		if !slices.Equal(keptNames, step.kept) {
			t.Errorf("step %d: the planner kept the inputs of %v, want %v", i, keptNames, step.kept)
		}
		wantRecs, gotRecs := evaluated.records(), kept.records()
		if len(wantRecs) != len(gotRecs) {
			t.Fatalf("step %d: %d records, want %d", i, len(gotRecs), len(wantRecs))
		}
		for name, rec := range wantRecs {
			other := gotRecs[name]
			// Each state seals with a key of its own; ids are given in
			// the order of creates, which run in parallel.
			wantOut, gotOut := maps.Clone(rec.Outputs), maps.Clone(other.Outputs)
			delete(wantOut, "id")
			delete(gotOut, "id")
			if !reflect.DeepEqual(maskSealed(rec.Inputs), maskSealed(other.Inputs)) || !reflect.DeepEqual(wantOut, gotOut) || (rec.ID == "") != (other.ID == "") {
				t.Errorf("step %d: %s recorded %+v, want %+v", i, name, other, rec)
			}
		}
	}
}

// TestApplyHoldsToThePlan checks that apply refuses to create with inputs
// that differ from those the plan showed, whether it keeps the planned
// values or packs them until their turn (apply.Options.Consume), packed
// by apply or by the planner (planner.Options.Pack).
func TestApplyHoldsToThePlan(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct{ consume, pack bool }{{false, false}, {true, false}, {true, true}} {
		consume := mode.consume
		h := newHarness(t)
		st, err := state.Open(h.path, state.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		planned := h.load(resourcesOf(endpoint("a", "first")))
		p, diags := planner.Plan(t.Context(), planned, st, h.reg, planner.Options{Pack: mode.pack})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		res, err := apply.Apply(t.Context(), p, h.load(resourcesOf(endpoint("a", "second"))), st, h.reg, apply.Options{Command: "apply", Consume: consume})
		st.Close()
		want := `input "displayName" is "second" now but "first" in the plan`
		if err != nil || len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Err.Error(), want) {
			t.Errorf("%+v: apply failed %v (%v); want a's create to fail with %q", mode, res.Failed, err, want)
		}
		if recs := h.records(); len(recs) != 0 {
			t.Errorf("%+v: state holds %v, want nothing created", mode, recs)
		}
	}
}
