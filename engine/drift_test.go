package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/refresh"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/report"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// drift runs refresh.Drift for src against the state file.
func (h *harness) drift(src string) *report.Drift {
	h.t.Helper()
	var rep *report.Drift
	var err error
	h.reading(func(st *state.Store) { rep, err = refresh.Drift(h.t.Context(), h.load(src), st, h.reg, 4) })
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

// refreshOnly makes a refresh-only plan of src and applies it, through a
// plan file as 'reconcile plan --refresh-only --out' then 'apply FILE' do.
func (h *harness) refreshOnly(src string) (*plan.Plan, *report.Apply) {
	h.t.Helper()
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	spec := h.load(src)
	p, diags := planner.Plan(h.t.Context(), spec, st, h.reg, planner.Options{RefreshOnly: true, Refresh: true})
	if diags.HasErrors() {
		h.t.Fatalf("plan --refresh-only: %v", diags.Err())
	}
	key, err := st.SecretKey()
	if err != nil {
		h.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, plan.File{Plan: p}, "test", key); err != nil {
		h.t.Fatal(err)
	}
	pf, err := plan.ReadFile(&buf)
	if err != nil {
		h.t.Fatal(err)
	}
	if !pf.Plan.RefreshOnly {
		h.t.Fatalf("the plan file lost RefreshOnly")
	}
	meta, err := st.Meta()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := apply.CheckPlan(&pf, meta, key, spec); err != nil {
		h.t.Fatal(err)
	}
	res, err := apply.RefreshOnly(h.t.Context(), pf.Plan, st, apply.Options{Command: "apply --refresh-only"})
	if err != nil {
		h.t.Fatal(err)
	}
	if res.Err() != nil {
		h.t.Fatalf("apply --refresh-only: %v", res.Failed)
	}
	return p, res
}

// edit changes the object id in the fake cloud, as another user would.
func (h *harness) edit(id string, set resources.Attrs) {
	h.t.Helper()
	o, ok := h.cloud.object(id)
	if !ok {
		h.t.Fatalf("no object %s to edit", id)
	}
	for k, v := range set {
		if v == nil {
			delete(o, k)
		} else {
			o[k] = v
		}
	}
	h.cloud.put(id, o)
}

func renderString(t *testing.T, p *plan.Plan, f func(*bytes.Buffer, *plan.Plan) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func textOf(t *testing.T, p *plan.Plan) string {
	return renderString(t, p, func(b *bytes.Buffer, p *plan.Plan) error { return render.PlanText(b, p, render.Options{}) })
}

// driftPaths lists the paths of a change's drift.
func driftPaths(c plan.Change) string {
	var out []string
	for _, f := range c.Drift {
		out = append(out, f.Path)
	}
	return strings.Join(out, ",")
}

// TestPlanShowsDrift checks that a refreshing plan records what changed
// outside reconcile on each change, apart from what the specs ask for, and
// that every renderer shows it in its own section.
func TestPlanShowsDrift(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("a", "first", "freeformTags: {team: nlp}"), endpoint("b", "second"), endpoint("c", "third"))
	h.mustApply(src)
	h.edit(h.record("a").ID, resources.Attrs{"displayName": "renamed by hand", "freeformTags": map[string]any{"team": "nlp", "owner": "bob"}})
	h.cloud.remove(h.record("b").ID)

	p := h.plan(src, planner.Options{Refresh: true})
	a := change(t, p, "a")
	if a.Action != plan.Update || driftPaths(a) != "displayName,freeformTags" {
		t.Fatalf("a = %s with drift %q, want an update with drift displayName,freeformTags", a.Action, driftPaths(a))
	}
	if f := a.Drift[0]; f.Applied != "first" || f.Live != "renamed by hand" {
		t.Errorf("a drift displayName = %v -> %v, want first -> renamed by hand", f.Applied, f.Live)
	}
	if a.Before["displayName"] != "renamed by hand" || a.After["displayName"] != "first" {
		t.Errorf("a change = %v -> %v, want the live value back to the specs", a.Before["displayName"], a.After["displayName"])
	}
	b := change(t, p, "b")
	if b.Action != plan.Create || !b.DeletedOutside || b.DeletedID == "" || !b.Drifted() {
		t.Errorf("b = %s deleted %v (%q), want a create of an object deleted outside reconcile", b.Action, b.DeletedOutside, b.DeletedID)
	}
	if c := change(t, p, "c"); c.Drifted() || c.Action != plan.NoOp {
		t.Errorf("c = %s, drift %v, want an unchanged no-op", c.Action, c.Drift)
	}
	if !p.HasDrift() {
		t.Errorf("plan.HasDrift() = false")
	}

	text := textOf(t, p)
	section, changes, ok := strings.Cut(text, "reconcile will take these actions")
	if !ok {
		t.Fatalf("no changes header in:\n%s", text)
	}
	for _, want := range []string{
		"Objects changed outside reconcile since the last apply:",
		"# a (oci:AiLanguage:Endpoint) was changed outside reconcile",
		`~ displayName  = "first" -> "renamed by hand"`,
		`+ owner = "bob"`,
		"# b (oci:AiLanguage:Endpoint) was deleted outside reconcile",
		"reconcile apply --refresh-only",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the drift section lacks %q:\n%s", want, section)
		}
	}
	if strings.Contains(section, "# c ") {
		t.Errorf("the drift section lists c, which did not change:\n%s", section)
	}
	if !strings.Contains(changes, `~ displayName  = "renamed by hand" -> "first"`) {
		t.Errorf("the changes do not take displayName back to the specs:\n%s", changes)
	}

	js := renderString(t, p, func(b *bytes.Buffer, p *plan.Plan) error { return render.PlanJSON(b, p, render.Options{}) })
	var doc struct {
		FormatVersion string `json:"format_version"`
		ResourceDrift []struct {
			Address, Status, ID string
			Fields              []struct {
				Path          string
				Applied, Live any
			}
		} `json:"resource_drift"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FormatVersion != render.PlanJSONVersion || len(doc.ResourceDrift) != 2 {
		t.Fatalf("json: format %q, resource_drift %+v, want a and b", doc.FormatVersion, doc.ResourceDrift)
	}
	if d := doc.ResourceDrift[0]; d.Address != "a" || d.Status != "changed" || len(d.Fields) != 2 || d.Fields[0].Live != "renamed by hand" {
		t.Errorf("json resource_drift[0] = %+v", d)
	}
	if d := doc.ResourceDrift[1]; d.Address != "b" || d.Status != "deleted" || d.ID == "" {
		t.Errorf("json resource_drift[1] = %+v, want b deleted with its old id", d)
	}

	md := renderString(t, p, func(b *bytes.Buffer, p *plan.Plan) error {
		return render.PlanMarkdown(b, p, render.Options{})
	})
	if !strings.Contains(md, "2 objects changed outside reconcile since the last apply") || !strings.Contains(md, `+ displayName  = "renamed by hand"`) {
		t.Errorf("markdown lacks the drift note:\n%s", md)
	}

	// Without refresh nothing is read, so nothing is known to have drifted.
	if p := h.plan(src, planner.Options{Refresh: false}); p.HasDrift() {
		t.Errorf("plan --refresh=false reports drift")
	}
}

// TestNoFalseDrift checks that what the cloud does on its own never shows
// as drift, in Drift and in a refreshing plan: fields the specs leave to the
// cloud, output-only fields, empty maps for absent ones, reordered maps,
// ignored fields, and the map entries a driver says the cloud adds by
// itself (OCI's Oracle-Tags tag defaults).
func TestNoFalseDrift(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	vc := &vendorCloud{fakeCloud: h.cloud}
	h.reg.Drivers[endpointToken] = vc
	src := resourcesOf(
		endpoint("plain", "plain"),
		endpoint("tagged", "tagged", `definedTags: {"Operations.CostCenter": "42"}`, "freeformTags: {b: '2', a: '1'}"),
		endpoint("ignored", "ignored", "options.ignoreChanges: [displayName, 'freeformTags[\"owner\"]']", "freeformTags: {team: x}"),
	)
	h.mustApply(src)
	for _, name := range []string{"plain", "tagged", "ignored"} {
		id := h.record(name).ID
		o, _ := h.cloud.object(id)
		tags, _ := o["definedTags"].(map[string]any)
		tags = mergeMaps(tags, map[string]any{"Oracle-Tags.CreatedBy": "ocid1.user.oc1..someone", "Oracle-Tags.CreatedOn": "2025-01-01T00:00:00.000Z"})
		h.edit(id, resources.Attrs{
			"definedTags": tags,
			"state":       "UPDATING", "timeUpdated": "2025-01-02T00:00:00Z", "systemTags": map[string]any{"orcl-cloud.free-tier-retained": "true"},
			"description": nil, "lifecycleDetails": "moved along",
		})
	}
	h.edit(h.record("plain").ID, resources.Attrs{"freeformTags": map[string]any{}})
	h.edit(h.record("tagged").ID, resources.Attrs{"freeformTags": map[string]any{"a": "1", "b": "2"}})
	h.edit(h.record("ignored").ID, resources.Attrs{"displayName": "renamed by hand", "freeformTags": map[string]any{"team": "x", "owner": "bob"}})

	if rep := h.drift(src); rep.HasDrift() || len(rep.Errors) > 0 {
		t.Errorf("drift = %+v, errors %v, want none", rep.Items, rep.Errors)
	}
	p := h.plan(src, planner.Options{Refresh: true})
	if p.HasDrift() || p.HasChanges() {
		t.Errorf("plan = %q, drift %v, want no changes and no drift:\n%s", actions(p), p.HasDrift(), textOf(t, p))
	}
	// The tag defaults are not managed: a refresh-only apply does not
	// adopt them into state.
	h.edit(h.record("tagged").ID, resources.Attrs{"displayName": "renamed by hand"})
	h.refreshOnly(src)
	if tags := h.record("tagged").Inputs["definedTags"]; !resources.Equal(tags, map[string]any{"Operations.CostCenter": "42"}) {
		t.Errorf("after a refresh, tagged definedTags = %v, want the user's tag only", tags)
	}
	// A tag default the specs do set is compared like any other key.
	set := strings.Replace(src, `"Operations.CostCenter": "42"`, `"Operations.CostCenter": "42", "Oracle-Tags.CreatedBy": "me"`, 1)
	set = strings.Replace(set, "displayName: tagged", "displayName: renamed by hand", 1)
	if c := change(t, h.plan(set, planner.Options{Refresh: true}), "tagged"); c.Action != plan.Update {
		t.Errorf("a set Oracle-Tags key that differs: tagged = %s, want update", c.Action)
	}
}

func mergeMaps(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// vendorCloud is the fake cloud whose definedTags Oracle-Tags entries are
// the cloud's own, as the OCI driver declares.
type vendorCloud struct{ *fakeCloud }

func (vendorCloud) VendorKey(field, key string) bool {
	return field == "definedTags" && strings.HasPrefix(key, "Oracle-Tags.")
}

// TestDriftReport checks each kind of drift Drift reports.
func TestDriftReport(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var mu sync.Mutex
	etag, members := "etag-1", `["user:a@x"]`
	h.iam.result = func(args resources.Attrs) (resources.Attrs, error) {
		mu.Lock()
		defer mu.Unlock()
		return resources.Attrs{"id": "services/s", "etag": etag, "serviceName": args["serviceName"],
			"policyData": `{"bindings":[{"members":` + members + `,"role":"roles/viewer"}]}`}, nil
	}
	src := `
variables:
  policy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: s
` + resourcesOf(endpoint("a", "a", "description: ${policy.etag}"), endpoint("b", "b"), endpoint("c", "c", "options.ignoreChanges: [displayName]"))
	h.mustApply(src)
	if rep := h.drift(src); rep.HasDrift() || rep.Checked != 4 {
		t.Fatalf("drift right after apply: %+v (checked %d), want none of 4", rep.Items, rep.Checked)
	}
	// The same members in another order, under a new etag: only the etag.
	mu.Lock()
	etag, members = "etag-2", `["user:a@x","user:a@x"]`
	mu.Unlock()
	rep := h.drift(src)
	if len(rep.Items) != 1 || rep.Items[0].Addr != "policy" || len(rep.Items[0].Fields) != 1 || rep.Items[0].Fields[0].Path != "etag" {
		t.Errorf("drift after a rewrite of the same policy = %+v, want the etag of policy alone", rep.Items)
	}

	mu.Lock()
	members = `["user:b@x","user:a@x","user:c@x"]`
	mu.Unlock()
	h.edit(h.record("a").ID, resources.Attrs{"inferenceUnits": int64(3)})
	h.cloud.remove(h.record("b").ID)
	h.edit(h.record("c").ID, resources.Attrs{"displayName": "renamed"})
	rep = h.drift(src)
	if len(rep.Items) != 3 || len(rep.Errors) != 0 {
		t.Fatalf("drift = %+v, errors %v, want a, b and policy", rep.Items, rep.Errors)
	}
	got := map[string]report.DriftItem{}
	for _, it := range rep.Items {
		got[it.Addr] = it
	}
	if a := got["a"]; a.Status != report.DriftChanged || len(a.Fields) != 1 || a.Fields[0].Path != "inferenceUnits" {
		t.Errorf("a = %+v, want inferenceUnits changed", a)
	}
	if b := got["b"]; b.Status != report.DriftDeleted {
		t.Errorf("b = %+v, want deleted", b)
	}
	if pol := got["policy"]; pol.Status != report.DriftResult || len(pol.Details) != 1 || pol.Details[0] != "binding roles/viewer: +user:b@x +user:c@x" {
		t.Errorf("policy = %+v, want a new result adding b and c to roles/viewer", pol)
	}
	var text bytes.Buffer
	if err := render.DriftText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(text.String(), "Drift: 1 changed, 1 deleted, 1 with new lookup results (4 checked).\n") {
		t.Errorf("text does not end with the summary:\n%s", text.String())
	}
	// A plan shows the same drift, lookup included.
	p := h.plan(src, planner.Options{Refresh: true})
	if pol := change(t, p, "policy"); len(pol.DriftDetails) != 1 || driftPaths(pol) != "etag,policyData" {
		t.Errorf("plan: policy drift %q details %v", driftPaths(pol), pol.DriftDetails)
	}
	if c := change(t, p, "c"); c.Drifted() {
		t.Errorf("plan: c drift %v, want none (displayName is ignored)", c.Drift)
	}
}

// TestRefreshOnly checks plan --refresh-only and its apply: one refresh per
// drifted node, state takes the cloud's values and nothing in the cloud
// changes; afterwards drift is clean and a plan shows the way back to the
// specs.
func TestRefreshOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `
variables:
  policy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: s
` + resourcesOf(endpoint("a", "first", "description: {'fn::secret': k1}"), endpoint("b", "second"), endpoint("c", "third"))
	etag := "etag-1"
	var mu sync.Mutex
	h.iam.result = func(args resources.Attrs) (resources.Attrs, error) {
		mu.Lock()
		defer mu.Unlock()
		return resources.Attrs{"id": "services/s", "etag": etag, "serviceName": args["serviceName"], "policyData": "{}"}, nil
	}
	h.mustApplyLoose(src)
	aID, bID := h.record("a").ID, h.record("b").ID
	h.edit(aID, resources.Attrs{"displayName": "renamed by hand", "description": "k2"})
	h.cloud.remove(bID)
	mu.Lock()
	etag = "etag-2"
	mu.Unlock()
	calls := len(h.cloud.callLog())

	p, res := h.refreshOnly(src)
	if got, want := actions(p), "a:refresh b:refresh c:no-op policy:refresh"; got != want {
		t.Errorf("refresh-only plan = %q, want %q", got, want)
	}
	if !p.RefreshOnly || !p.HasChanges() {
		t.Errorf("RefreshOnly %v, HasChanges %v", p.RefreshOnly, p.HasChanges())
	}
	if res.Counts[plan.Refresh] != 3 {
		t.Errorf("apply --refresh-only counts = %v, want 3 refreshed", res.Counts)
	}
	if n := len(h.cloud.callLog()); n != calls {
		t.Errorf("apply --refresh-only changed the cloud: %v", h.cloud.callLog()[calls:])
	}
	for _, f := range []func() string{
		func() string { return textOf(t, p) },
	} {
		if s := f(); strings.Contains(s, "k1") || strings.Contains(s, "k2") {
			t.Errorf("the refresh-only plan shows a secret:\n%s", s)
		}
	}
	text := textOf(t, p)
	for _, want := range []string{"accept the cloud's values into state", `~ displayName = "first" -> "renamed by hand"`, "~ description = (sensitive value)", "was deleted outside reconcile: it will be removed from state", "Plan: 3 to accept into state"} {
		if !strings.Contains(text, want) {
			t.Errorf("refresh-only text lacks %q:\n%s", want, text)
		}
	}

	a := h.record("a")
	if a.Inputs["displayName"] != "renamed by hand" || a.ID != aID {
		t.Errorf("a in state = %v, want the live displayName", a.Inputs)
	}
	if sealed, _ := a.Inputs["description"].(map[string]any); sealed == nil || strings.Contains(canonical(a.Inputs), "k2") {
		t.Errorf("a description in state = %v, want the live value sealed", a.Inputs["description"])
	}
	if _, ok := h.records()["b"]; ok {
		t.Errorf("b, deleted outside reconcile, is still in state")
	}
	if pol := h.record("policy"); pol.Outputs["etag"] != "etag-2" {
		t.Errorf("policy in state = %v, want the new etag", pol.Outputs)
	}
	if rep := h.drift(src); rep.HasDrift() || len(rep.Errors) > 0 {
		t.Errorf("drift after apply --refresh-only = %+v %v, want none", rep.Items, rep.Errors)
	}
	// Back to the specs: a is updated, b created; no drift left to show.
	p2 := h.plan(src, planner.Options{Refresh: true})
	if got := actions(p2); got != "a:update b:create c:no-op policy:read" {
		t.Errorf("plan after the refresh = %q, want a:update b:create", got)
	}
	if p2.HasDrift() {
		t.Errorf("plan after the refresh still reports drift:\n%s", textOf(t, p2))
	}
	if c := change(t, p2, "a"); c.Before["displayName"] != "renamed by hand" || c.After["displayName"] != "first" {
		t.Errorf("a: %v -> %v, want back to first", c.Before["displayName"], c.After["displayName"])
	}

	// Nothing drifted: nothing to accept.
	h.mustApply(src)
	p3, res := h.refreshOnly(src)
	if p3.HasChanges() || res.Counts[plan.Refresh] != 0 || !strings.Contains(textOf(t, p3), "No changes. State matches the cloud") {
		t.Errorf("refresh-only without drift = %q:\n%s", actions(p3), textOf(t, p3))
	}
	hist := h.history()
	if n := len(hist); n == 0 || hist[n-1].Command != "apply --refresh-only" {
		t.Errorf("history = %+v, want apply --refresh-only last", hist)
	}
}

// mustApplyLoose applies src without refresh.
func (h *harness) mustApplyLoose(src string) {
	h.t.Helper()
	_, res := h.applyWith(src, planner.Options{}, apply.Options{Command: "apply"})
	if res.Err() != nil {
		h.t.Fatalf("apply: %v", res.Failed)
	}
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestImportResourceDeclaration checks 'reconcile import': the object made
// outside reconcile is recorded with its live inputs, less the tags the
// cloud adds by itself, and the YAML printed for it, pasted as the specs,
// plans no changes.
func TestImportResourceDeclaration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.reg.Drivers[endpointToken] = &vendorCloud{fakeCloud: h.cloud}
	id := "ocid1.ailanguageendpoint.oc1..made-by-hand"
	h.cloud.put(id, resources.Attrs{
		"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
		"displayName": "by hand", "inferenceUnits": int64(2), "description": nil,
		"freeformTags": map[string]any{"team": "nlp"},
		"definedTags":  map[string]any{"Oracle-Tags.CreatedBy": "ocid1.user.oc1..someone", "Oracle-Tags.CreatedOn": "2025-01-01T00:00:00.000Z"},
		"state":        "ACTIVE", "timeCreated": "2025-01-01T00:00:00Z",
	})
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := apply.Import(t.Context(), st, h.reg, "adopted", "oci:ai_language:Endpoint", id)
	if err == nil {
		if _, err2 := apply.Import(t.Context(), st, h.reg, "adopted", endpointToken, id); err2 == nil || !strings.Contains(err2.Error(), "already in state") {
			t.Errorf("a second import of the same name: %v, want already in state", err2)
		}
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rec.Type != endpointToken || rec.ID != id {
		t.Errorf("record = %s %s, want %s %s", rec.Type, rec.ID, endpointToken, id)
	}
	for _, k := range []string{"definedTags", "description", "state"} {
		if _, ok := rec.Inputs[k]; ok {
			t.Errorf("imported inputs hold %s: %v", k, rec.Inputs)
		}
	}
	if rec.Outputs["state"] != "ACTIVE" || rec.Outputs["definedTags"] != nil {
		t.Errorf("imported outputs = %v, want the output-only fields", rec.Outputs)
	}
	text, err := render.DeclarationYAML(rec.Name, rec.Type, rec.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "Oracle-Tags") || !strings.Contains(text, "adopted:") {
		t.Errorf("declaration:\n%s", text)
	}
	for _, refresh := range []bool{true, false} {
		if p := h.plan(text, planner.Options{Refresh: refresh}); p.HasChanges() || p.HasDrift() {
			t.Errorf("plan (refresh=%v) of the printed declaration = %q:\n%s", refresh, actions(p), textOf(t, p))
		}
	}
	if rep := h.drift(text); rep.HasDrift() {
		t.Errorf("drift after import = %+v", rep.Items)
	}
}
