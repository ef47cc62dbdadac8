package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/plan"
	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/golden"
	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/state"
)

// comparable strips what legitimately differs between two plans of the same
// specs written differently: positions.
func withoutPositions(p *plan.Plan) *plan.Plan {
	out := *p
	out.Changes = append([]plan.Change(nil), p.Changes...)
	for i := range out.Changes {
		out.Changes[i].Pos = diag.Pos{}
	}
	out.SpecHash = ""
	return &out
}

func TestPlanFieldSpellings(t *testing.T) {
	t.Parallel()
	const camel = `
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName: first
      inferenceUnits: 2
      freeformTags: {cost_center: ml}
    options:
      ignoreChanges: [definedTags]
  b:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ${a.compartmentId}
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName: ${a.displayName}-b
      description: ${a.freeformTags.cost_center}
`
	for name, src := range map[string]string{
		"snake_case": `
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties:
      compartment_id: ocid1.compartment.oc1..x
      model_id: ocid1.ailanguagemodel.oc1..m1
      display_name: first
      inference_units: 2
      freeform_tags: {cost_center: ml}
    options:
      ignoreChanges: [defined_tags]
  b:
    type: oci:AiLanguage:Endpoint
    properties:
      compartment_id: ${a.compartment_id}
      model_id: ocid1.ailanguagemodel.oc1..m1
      display_name: ${a.display_name}-b
      description: ${a.freeform_tags.cost_center}
`,
		"mixed": `
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      model_id: ocid1.ailanguagemodel.oc1..m1
      displayName: first
      inference_units: 2
      freeformTags: {cost_center: ml}
    options:
      ignoreChanges: [defined_tags]
  b:
    type: oci:AiLanguage:Endpoint
    properties:
      compartment_id: ${a.compartmentId}
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName: ${a.display_name}-b
      description: ${a.freeformTags.cost_center}
`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			want := withoutPositions(h.plan(camel, planner.Options{}))
			got := withoutPositions(h.plan(src, planner.Options{}))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("plan of the %s spec differs from the camelCase one:\n got %+v\nwant %+v", name, got.Changes, want.Changes)
			}
			b := change(t, got, "b")
			if b.After["displayName"] != "first-b" || b.After["compartmentId"] != "ocid1.compartment.oc1..x" || b.After["description"] != "ml" {
				t.Errorf("b's planned inputs = %v, want the values read through a's fields", b.After)
			}
			// Applying one spelling and planning the other changes nothing.
			h.mustApply(src)
			if p := h.plan(camel, planner.Options{Refresh: true}); p.HasChanges() {
				t.Errorf("camelCase plan after applying the %s spec = %q, want no changes", name, actions(p))
			}
		})
	}
}

func TestLoadRefusesBothSpellings(t *testing.T) {
	t.Parallel()
	src := resourcesOf(endpoint("a", "a", "display_name: other"))
	_, diags := specs.Load(t.TempDir(), []specs.Source{{Name: "spec.yaml", Data: []byte(src)}}, nil)
	if !diags.HasErrors() || !strings.Contains(diagText(diags), "display") {
		t.Errorf("Load of a spec with displayName and display_name = %q, want an error naming the field", diagText(diags))
	}
}

func TestPlanGetStateMismatch(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		state string
		want  string // a diagnostic containing this, or "" for none
	}{
		"matching state": {
			state: "{displayName: legacy-name, inferenceUnits: 3}",
		},
		"camelCase field differs": {
			state: "{displayName: other-name}",
			want:  `spec.yaml:7:15: error: get "legacy": state field "displayName" is "other-name" in the specs but "legacy-name" in the cloud`,
		},
		"snake_case field differs": {
			state: "{inference_units: 2}",
			want:  `spec.yaml:7:15: error: get "legacy": state field "inference_units" is 2 in the specs but 3 in the cloud`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.cloud.put("ocid1.legacy", resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1",
				"displayName": "legacy-name", "inferenceUnits": 3})
			src := `
resources:
  legacy:
    type: oci:AiLanguage:Endpoint
    get:
      id: ocid1.legacy
      state: ` + tc.state + "\n"
			_, diags := h.makePlan(src, planner.Options{})
			got := diagText(diags)
			if tc.want == "" {
				if diags.HasErrors() {
					t.Errorf("plan: %s, want no error", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("plan diagnostics = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlanGetMissingObject(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, diags := h.makePlan("resources:\n  legacy:\n    type: oci:AiLanguage:Endpoint\n    get:\n      id: ocid1.gone\n", planner.Options{})
	if want := `get "legacy": oci:AiLanguage:Endpoint "ocid1.gone" does not exist`; !strings.Contains(diagText(diags), want) {
		t.Errorf("diagnostics = %q, want %q", diagText(diags), want)
	}
}

func TestPlanProtect(t *testing.T) {
	t.Parallel()
	protected := endpoint("a", "a", "options.protect: true", "options.replaceOnChanges: [modelId]")
	for name, tc := range map[string]struct {
		src     string
		destroy bool
		want    []string
	}{
		"replacement": {
			src:  resourcesOf(endpoint("a", "a", "modelId: ocid1.ailanguagemodel.oc1..m2", "options.protect: true", "options.replaceOnChanges: [modelId]")),
			want: []string{`spec.yaml:2:3: error: resource "a" is protected and cannot be replaced`, `replaceOnChanges asks for a replacement when "modelId" changes`, "protect: false"},
		},
		"removal from the specs": {
			src:  resourcesOf(endpoint("b", "b")),
			want: []string{`error: resource "a" is protected and cannot be deleted`, "protect is recorded in state", "reconcile state rm a"},
		},
		"destroy": {
			src:     resourcesOf(protected),
			destroy: true,
			want:    []string{`error: resource "a" is protected and cannot be deleted`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.mustApply(resourcesOf(protected))
			if r := h.record("a"); !r.Protect {
				t.Fatalf("record.Protect = false, want true")
			}
			_, diags := h.makePlan(tc.src, planner.Options{Refresh: true, Destroy: tc.destroy})
			got := diagText(diags)
			if !diags.HasErrors() {
				t.Fatalf("plan succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnostics = %q, want them to contain %q", got, w)
				}
			}
			if log := h.cloud.callLog(); len(log) != 1 {
				t.Errorf("calls = %q, want only the first create", log)
			}
		})
	}
}

func TestPlanUnprotectThenDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a", "options.protect: true")))
	h.mustApply(resourcesOf(endpoint("a", "a", "options.protect: false")))
	if r := h.record("a"); r.Protect {
		t.Fatalf("record.Protect = true after setting protect: false and applying")
	}
	p, _ := h.mustApply(resourcesOf(endpoint("b", "b")))
	if c := change(t, p, "a"); c.Action != plan.Delete {
		t.Errorf("a: %s, want delete once unprotected", c.Action)
	}
}

func TestPlanRefresh(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("a", "a"), endpoint("gone", "gone"))
	h.mustApply(src)
	id := h.record("a").ID
	h.cloud.remove(id)
	h.cloud.remove(h.record("gone").ID)

	reads := h.cloud.readCount()
	p := h.plan(src, planner.Options{Refresh: false})
	if got := actions(p); got != "a:no-op gone:no-op" {
		t.Errorf("plan without refresh = %q, want no-ops (state is trusted)", got)
	}
	if n := h.cloud.readCount() - reads; n != 0 {
		t.Errorf("plan without refresh read %d objects, want none", n)
	}

	p = h.plan(src, planner.Options{Refresh: true})
	c := change(t, p, "a")
	if c.Action != plan.Create || c.Reason != plan.ReasonDeletedOutside || c.ID != "" {
		t.Errorf("a = %s (%s, id %q), want create because it was deleted outside reconcile", c.Action, c.Reason, c.ID)
	}
	if n := h.cloud.readCount() - reads; n != 2 {
		t.Errorf("plan with refresh read %d objects, want 2", n)
	}

	// Removed from the specs and already gone: forgotten, not deleted.
	p = h.plan(resourcesOf(endpoint("a", "a")), planner.Options{Refresh: true})
	if c := change(t, p, "gone"); c.Action != plan.Forget || c.Reason != plan.ReasonGoneOutside {
		t.Errorf("gone = %s (%s), want forget because it was already deleted", c.Action, c.Reason)
	}

	// Drift is compared with the live object when refreshing.
	h.cloud.put(id, resources.Attrs{"compartmentId": "ocid1.compartment.oc1..x", "modelId": "ocid1.ailanguagemodel.oc1..m1", "displayName": "changed by hand", "inferenceUnits": 1})
	p = h.plan(resourcesOf(endpoint("a", "a")), planner.Options{Refresh: true})
	if c := change(t, p, "a"); c.Action != plan.Update || c.Before["displayName"] != "changed by hand" || c.After["displayName"] != "a" {
		t.Errorf("a after drift = %s, before %v after %v, want an update back to a", c.Action, c.Before["displayName"], c.After["displayName"])
	}
}

func TestPlanDestroy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("a", "a"), endpoint("b", "b", "description: ${a.id}"), endpoint("c", "c", "description: ${b.id}"))
	h.mustApply(src)
	p := h.plan(src, planner.Options{Destroy: true})
	if !p.Destroy {
		t.Errorf("plan.Destroy = false")
	}
	if got, want := actions(p), "c:delete b:delete a:delete"; got != want {
		t.Errorf("destroy plan = %q, want %q", got, want)
	}
	recs := h.records()
	for _, c := range p.Changes {
		if c.ID != recs[c.Addr].ID || c.Before["id"] != recs[c.Addr].ID {
			t.Errorf("%s: id %q before %v, want %q", c.Addr, c.ID, c.Before["id"], recs[c.Addr].ID)
		}
	}
}

// The plan made against a state records the state's lineage and serial and
// the specs' hash; CheckPlan refuses it once any of them moved on.
func TestCheckPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("a", "a"))
	h.mustApply(src)
	next := resourcesOf(endpoint("a", "renamed"))
	p := h.plan(next, planner.Options{})
	m := h.meta()
	if p.Lineage != m.Lineage || p.Serial != m.Serial || p.Serial == 0 {
		t.Fatalf("plan lineage/serial = %q/%d, state %q/%d", p.Lineage, p.Serial, m.Lineage, m.Serial)
	}
	spec := h.load(next)
	if p.SpecHash != spec.Hash || p.SpecHash == "" {
		t.Fatalf("plan spec hash = %q, want the spec's %q", p.SpecHash, spec.Hash)
	}
	key := h.stateKey()
	pf := signed(t, plan.File{Plan: p}, key)
	other := newHarness(t)
	other.mustApply(src)

	if err := apply.CheckPlan(pf, m, key, spec); err != nil {
		t.Errorf("CheckPlan of a fresh plan = %v, want nil", err)
	}
	// Signed with another state's key: refused before anything else.
	if err := apply.CheckPlan(pf, other.meta(), other.stateKey(), spec); !errors.Is(err, plan.ErrFileChanged) {
		t.Errorf("CheckPlan against another state = %v, want ErrPlanFileChanged", err)
	}
	h.mustApply(resourcesOf(endpoint("a", "moved on")))
	for name, tc := range map[string]struct {
		meta state.Meta
		spec *specs.Spec
		want string
	}{
		"state changed":   {meta: h.meta(), spec: spec, want: "the state changed since the plan was made"},
		"other lineage":   {meta: other.meta(), spec: spec, want: "the plan file was made for another state"},
		"specs changed":   {meta: m, spec: h.load(src), want: "the specs or config values changed"},
		"state recreated": {meta: state.Meta{Lineage: m.Lineage}, spec: spec, want: "serial"},
	} {
		t.Run(name, func(t *testing.T) {
			err := apply.CheckPlan(pf, tc.meta, key, tc.spec)
			if !errors.Is(err, apply.ErrStalePlan) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckPlan = %v, want an ErrStalePlan saying %q", err, tc.want)
			}
		})
	}
}

// A plan file changed after it was made, by one byte anywhere, is refused
// whole: an added delete or replace never runs.
func TestPlanFileEditedIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a"), endpoint("b", "b")))
	p := h.plan(resourcesOf(endpoint("a", "a2"), endpoint("b", "b")), planner.Options{Refresh: true})
	key := h.stateKey()
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, plan.File{Plan: p, Backend: h.path}, "test", key); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	edits := map[string][]byte{
		"update made a delete": bytes.Replace(good, []byte(`"action":"update"`), []byte(`"action":"delete"`), 1),
		"no-op made a replace": bytes.Replace(good, []byte(`"action":"no-op"`), []byte(`"action":"replace"`), 1),
		"a value changed":      bytes.Replace(good, []byte(`"a2"`), []byte(`"a3"`), 1),
		"whitespace added":     bytes.Replace(good, []byte(`"changes":[`), []byte(`"changes": [`), 1),
		"signature replaced":   bytes.Replace(good, []byte(`"mac": "hmac-sha256:`), []byte(`"mac": "hmac-sha256:00`), 1),
	}
	for name, data := range edits {
		if bytes.Equal(data, good) {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		pf, err := plan.ReadFile(bytes.NewReader(data))
		if err != nil {
			continue // refused already
		}
		if err := pf.Verify(key); !errors.Is(err, plan.ErrFileChanged) {
			t.Errorf("%s: Verify = %v, want ErrPlanFileChanged", name, err)
		}
	}
	pf, err := plan.ReadFile(bytes.NewReader(good))
	if err != nil || pf.Verify(key) != nil {
		t.Errorf("the plan file as written: %v, %v", err, pf.Verify(key))
	}
}

func TestPlanFileRoundTrip(t *testing.T) {
	t.Parallel()
	const clear = "s3cr3t-clear-text"
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("old", "old")))
	src := `
variables:
  policy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${a.id}
` + resourcesOf(
		endpoint("a", "a", "description: {fn::secret: "+clear+"}"),
		endpoint("b", "b", "description: ${a.id}", "freeformTags: {token: {fn::secret: "+clear+"}, plain: x}"),
	) + `
outputs:
  token:
    fn::secret: ` + clear + `
`
	p := h.plan(src, planner.Options{})
	pf := plan.File{Plan: p, SpecPath: "/abs/specs", Backend: h.path, Stack: "dev", Config: map[string]string{"region": "eu"}}
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, pf, "v1.2.3", h.stateKey()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(clear)) {
		t.Fatalf("plan file holds the secret's clear text:\n%s", buf.Bytes())
	}
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatalf("plan file is not JSON: %v", err)
	}
	got, err := plan.ReadFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.SpecPath != pf.SpecPath || got.Backend != pf.Backend || got.Stack != pf.Stack || !reflect.DeepEqual(got.Config, pf.Config) {
		t.Errorf("read back paths/config = %q %q %v, want %q %q %v", got.SpecPath, got.Backend, got.Config, pf.SpecPath, pf.Backend, pf.Config)
	}
	gp := got.Plan
	if gp.Lineage != p.Lineage || gp.Serial != p.Serial || gp.SpecHash != p.SpecHash || gp.Destroy != p.Destroy {
		t.Errorf("read back lineage/serial/hash = %q/%d/%q, want %q/%d/%q", gp.Lineage, gp.Serial, gp.SpecHash, p.Lineage, p.Serial, p.SpecHash)
	}
	if actions(gp) != actions(p) {
		t.Fatalf("read back actions = %q, want %q", actions(gp), actions(p))
	}
	for i, c := range gp.Changes {
		w := p.Changes[i]
		if c.Kind != w.Kind || c.Type != w.Type || c.Reason != w.Reason || c.ReasonDetail != w.ReasonDetail || !reflect.DeepEqual(c.ReasonFields, w.ReasonFields) || c.ID != w.ID || c.Deferred != w.Deferred || c.Pos != w.Pos {
			t.Errorf("change %d read back as %+v, want %+v", i, c, w)
		}
	}
	b := change(t, gp, "b")
	if _, ok := b.After["description"].(value.Unknown); !ok {
		t.Errorf("b.description read back as %#v, want Unknown", b.After["description"])
	}
	if _, ok := b.After["id"].(value.Unknown); !ok {
		t.Errorf("b.id read back as %#v, want Unknown", b.After["id"])
	}
	tags, _ := b.After["freeformTags"].(map[string]any)
	if tags["plain"] != "x" {
		t.Errorf("b.freeformTags.plain read back as %#v, want x", tags["plain"])
	}
	if s := render.DisplayValue(tags["token"]); s != "(sensitive value)" {
		t.Errorf("b.freeformTags.token displays as %s, want (sensitive value)", s)
	}
	if s := render.DisplayValue(change(t, gp, "a").After["description"]); s != "(sensitive value)" {
		t.Errorf("a.description displays as %s, want (sensitive value)", s)
	}
	if c := change(t, gp, "policy"); !c.Deferred {
		t.Errorf("policy read back not deferred")
	}
	if c := change(t, gp, "old"); c.Action != plan.Delete || c.Before["displayName"] != "old" {
		t.Errorf("old read back as %s before %v, want the delete with its prior attributes", c.Action, c.Before)
	}
	// The saved plan applies like the one it was made from.
	st, err := state.Open(h.path, state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := h.load(src)
	meta, _ := st.Meta()
	key, _ := st.SecretKey()
	if err := apply.CheckPlan(&got, meta, key, spec); err != nil {
		t.Fatalf("CheckPlan: %v", err)
	}
	res, err := apply.Apply(t.Context(), gp, spec, st, h.reg, apply.Options{})
	if err != nil || res.Err() != nil {
		t.Fatalf("apply of the read-back plan: %v, %v", err, res.Failed)
	}
	if res.Counts[plan.Create] != 2 || res.Counts[plan.Delete] != 1 {
		t.Errorf("counts = %v, want 2 creates and 1 delete", res.Counts)
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(clear)) {
		t.Errorf("the state file holds the secret's clear text")
	}
}

// A no-op change's after, the same as its before, is written once and
// reads back as it was; an update's both are written.
func TestPlanFileNoOpWrittenOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(resourcesOf(endpoint("a", "a"), endpoint("b", "b", "inferenceUnits: 2")))
	p := h.plan(resourcesOf(endpoint("a", "a2"), endpoint("b", "b", "inferenceUnits: 2")), planner.Options{})
	var buf bytes.Buffer
	if err := plan.WriteFile(&buf, plan.File{Plan: p, Backend: h.path}, "test", h.stateKey()); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte(`"afterIsBefore":true`)); n != 1 {
		t.Errorf("afterIsBefore written %d times, want once (b's no-op):\n%s", n, buf.Bytes())
	}
	got, err := plan.ReadFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if actions(got.Plan) != actions(p) {
		t.Fatalf("read back actions = %q, want %q", actions(got.Plan), actions(p))
	}
	for i, c := range p.Changes {
		g := got.Plan.Changes[i]
		if !value.Same(g.Before, c.Before) || !value.Same(g.After, c.After) {
			t.Errorf("%s: read back before %v after %v, want %v and %v", c.Addr, g.Before, g.After, c.Before, c.After)
		}
	}
}

func TestReadPlanFileRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		data string
		want string
	}{
		"not JSON":             {data: "resources: {}", want: "not a reconcile plan file"},
		"no spec hash":         {data: `{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"changes":[]}}`, want: "not a reconcile plan file"},
		"newer format":         {data: `{"version":99,"specHash":"h"}`, want: "newer than this reconcile"},
		"bad action":           {data: `{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"addr":"a","action":"explode"}]}}`, want: `unknown action "explode"`},
		"no address":           {data: `{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"action":"create"}]}}`, want: "no address"},
		"older format":         {data: `{"version":1,"specHash":"h","changes":[]}`, want: "written by an older reconcile"},
		"format 3":             {data: `{"format":"reconcile plan","version":3,"mac":"m","plan":{"version":3,"specHash":"h","changes":[]}}`, want: "written by an older reconcile"},
		"format 4":             {data: `{"format":"reconcile plan","version":4,"mac":"m","plan":{"version":4,"specHash":"h","changes":[]}}`, want: "written by an older reconcile"},
		"after given twice":    {data: `{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"addr":"a","kind":"resource","action":"create","afterIsBefore":true,"after":{"x":1}}]}}`, want: "afterIsBefore"},
		"before not an object": {data: `{"format":"reconcile plan","version":5,"mac":"m","plan":{"version":5,"specHash":"h","changes":[{"addr":"a","kind":"resource","action":"no-op","before":"x"}]}}`, want: "not an object"},
		"a state file?":        {data: "\x00\x00\x00", want: "not a reconcile plan file"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := plan.ReadFile(strings.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadPlanFile(%q) = %v, want an error containing %q", tc.data, err, tc.want)
			}
		})
	}
}

// TestPlanGolden renders the plans of testdata/plan/<case>: spec.yaml
// planned without refresh against the records of state.json (if any),
// with the objects of observed.json (if any) in the fake cloud, compared
// with want.txt.
func TestPlanGolden(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "plan", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 5 {
		t.Fatalf("found %d golden cases under testdata/plan, want at least 5", len(dirs))
	}
	var noOps, kept atomic.Int64 // planned by the cases, once they have all run
	t.Cleanup(func() {
		if noOps.Load() == 0 {
			t.Errorf("no golden case plans a no-op: ShowOnly's no-ops are not checked")
		}
		if kept.Load() == 0 {
			t.Errorf("no golden case keeps inputs for the apply: values packed over them are not checked")
		}
	})
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			src, err := os.ReadFile(filepath.Join(dir, "spec.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "observed.json")); err == nil {
				var objs map[string]resources.Attrs
				if err := json.Unmarshal(data, &objs); err != nil {
					t.Fatalf("observed.json: %v", err)
				}
				for id, o := range objs {
					h.cloud.put(id, resources.CanonAttrs(o))
				}
			} else if !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "state.json")); err == nil {
				var recs []state.Record
				if err := json.Unmarshal(data, &recs); err != nil {
					t.Fatalf("state.json: %v", err)
				}
				st, err := state.Open(h.path, state.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if _, err := st.Put(r); err != nil {
						t.Fatalf("state.json: %v", err)
					}
				}
				st.Close()
			} else if !os.IsNotExist(err) {
				t.Fatal(err)
			}
			p, diags := h.makePlan(string(src), planner.Options{})
			if diags.HasErrors() {
				t.Fatalf("plan: %s", diagText(diags))
			}
			var buf bytes.Buffer
			if err := render.PlanText(&buf, p, render.Options{}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "./engine", filepath.Join(dir, "want.txt"), buf.Bytes())
			// A plan made to be applied at once, its creates and updates
			// packed, over the inputs kept for the apply, shows the same.
			packed, diags := h.makePlan(string(src), planner.Options{Pack: true, KeepInputs: true})
			if diags.HasErrors() {
				t.Fatalf("plan with Pack: %s", diagText(diags))
			}
			var text, doc, want bytes.Buffer
			if err := render.PlanText(&text, packed, render.Options{}); err != nil {
				t.Fatal(err)
			}
			if text.String() != buf.String() {
				t.Errorf("with Pack, the plan shows\n%s\nwant\n%s", text.String(), buf.String())
			}
			if err := render.PlanJSON(&want, p, render.Options{}); err != nil {
				t.Fatal(err)
			}
			if err := render.PlanJSON(&doc, packed, render.Options{}); err != nil {
				t.Fatal(err)
			}
			if doc.String() != want.String() {
				t.Errorf("with Pack, the JSON plan is\n%s\nwant\n%s", doc.String(), want.String())
			}
			for i, c := range packed.Changes {
				before, after, err := c.Values()
				if err != nil || !reflect.DeepEqual(after, p.Changes[i].After) || !reflect.DeepEqual(before, p.Changes[i].Before) {
					t.Errorf("with Pack, %s plans %v to %v (%v), want %v to %v", c.Addr, before, after, err, p.Changes[i].Before, p.Changes[i].After)
				}
				if (c.Action == plan.Create || c.Action == plan.Update) && !value.ContainsSecret(c.After) && !value.ContainsSecret(c.Before) && (c.After != nil || c.Before != nil) {
					t.Errorf("with Pack, the %s of %s keeps its values unpacked", c.Action, c.Addr)
				}
				if _, ok, _ := c.KeptInputs(); ok {
					kept.Add(1)
				}
			}
			noOps.Add(int64(checkShowOnly(t, h, string(src), p)))
		})
	}
}

// checkShowOnly plans src again with ShowOnly, as the CLI does a plan it
// only shows, and checks that the plan shows as p does, in text and in
// Markdown, with the same outputs, while its no-ops keep no values and
// the specs keep no inputs expression. It returns the number of no-ops.
func checkShowOnly(t *testing.T, h *harness, src string, p *plan.Plan) int {
	t.Helper()
	spec := h.load(src)
	var shown *plan.Plan
	var diags diag.Diagnostics
	h.reading(func(st *state.Store) {
		shown, diags = planner.Plan(t.Context(), spec, st, h.reg, planner.Options{Pack: true, ShowOnly: true})
	})
	if diags.HasErrors() {
		t.Fatalf("plan with ShowOnly: %s", diagText(diags))
	}
	for _, r := range []func(io.Writer, *plan.Plan, render.Options) error{render.PlanText, render.PlanMarkdown} {
		var got, want bytes.Buffer
		if err := r(&want, p, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := r(&got, shown, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("with ShowOnly, the plan shows\n%s\nwant\n%s", got.String(), want.String())
		}
	}
	if !reflect.DeepEqual(shown.Outputs, p.Outputs) {
		t.Errorf("with ShowOnly, the outputs are %v, want %v", shown.Outputs, p.Outputs)
	}
	n := 0
	for _, c := range shown.Changes {
		if c.Action == plan.NoOp {
			n++
			if c.Before != nil || c.After != nil {
				t.Errorf("with ShowOnly, the no-op of %s keeps its values %v and %v", c.Addr, c.Before, c.After)
			}
		}
	}
	for _, r := range spec.Resources {
		if r.Inputs() != nil {
			t.Errorf("with ShowOnly, %s keeps its inputs expression after the plan", r.Name)
		}
	}
	return n
}

// Secret inputs stay secret after apply: a reference to one of an
// unchanged resource sees the value, the cloud's echo of it is not shown
// or saved when refreshing, and a change of it is still seen.
func TestPlanSecretInputs(t *testing.T) {
	t.Parallel()
	const clear = "hush-hush-value"
	h := newHarness(t)
	spec := func(aName, secret string) string {
		return resourcesOf(
			endpoint("a", aName, "description: {fn::secret: "+secret+"}", "freeformTags: {token: {fn::secret: "+secret+"}, plain: x}"),
			endpoint("b", "b", "description: ${a.description}"),
		)
	}
	src := spec("a", clear)
	h.mustApply(src)
	if got := h.record("b").Inputs["description"]; got == clear || got == nil {
		t.Errorf("b's recorded description = %v, want it sealed", got)
	}
	if obj, _ := h.cloud.object(h.record("b").ID); obj["description"] != clear {
		t.Errorf("b's description in the cloud = %v, want the secret's value", obj["description"])
	}
	for _, refresh := range []bool{false, true} {
		p := h.plan(src, planner.Options{Refresh: refresh})
		if p.HasChanges() {
			t.Errorf("plan (refresh=%v) after apply = %q, want no changes", refresh, actions(p))
		}
		p = h.plan(spec("renamed", clear), planner.Options{Refresh: refresh})
		if got := actions(p); got != "a:update b:no-op" {
			t.Errorf("plan (refresh=%v) of a rename = %q, want a:update b:no-op", refresh, got)
		}
		var buf bytes.Buffer
		if err := plan.WriteFile(&buf, plan.File{Plan: p}, "test", h.stateKey()); err != nil {
			t.Fatal(err)
		}
		if err := render.PlanText(&buf, p, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(buf.Bytes(), []byte(clear)) {
			t.Errorf("plan (refresh=%v) file or text holds the secret's clear text:\n%s", refresh, buf.Bytes())
		}
		if !regexp.MustCompile(`~ displayName +=  ?"a" -> "renamed"`).MatchString(buf.String()) {
			t.Errorf("rendered plan (refresh=%v) does not show the rename:\n%s", refresh, buf.String())
		}
		if text := buf.String(); strings.Contains(text, "~ description") || strings.Contains(text, "~ freeformTags") {
			t.Errorf("rendered plan (refresh=%v) shows unchanged secret inputs as changed:\n%s", refresh, text)
		}
		p = h.plan(spec("a", "another-secret"), planner.Options{Refresh: refresh})
		if got := actions(p); got != "a:update b:update" {
			t.Errorf("plan (refresh=%v) of a new secret value = %q, want a:update b:update", refresh, got)
		}
	}
	// The rename applies, with b still seeing a's description.
	h.mustApply(spec("renamed", clear))
	if obj, _ := h.cloud.object(h.record("b").ID); obj["description"] != clear {
		t.Errorf("b's description in the cloud = %v after a's rename, want the secret's value", obj["description"])
	}
}

// TestPlanLeavesUnsetInputsToTheCloud checks that an input the specs never
// set (OCI names an endpoint when no displayName is given) is not a
// difference, while one removed from the specs since the last apply is.
func TestPlanLeavesUnsetInputsToTheCloud(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := resourcesOf(endpoint("a", "", "description: first"))
	h.mustApply(spec)
	id := h.record("a").ID
	obj, _ := h.cloud.object(id)
	obj["displayName"] = "ailanguageendpoint20261121120000" // chosen by the cloud
	h.cloud.put(id, obj)
	if p := h.plan(spec, planner.Options{Refresh: true}); p.HasChanges() {
		t.Fatalf("plan after the cloud named the endpoint = %q, want no changes", actions(p))
	}

	p := h.plan(resourcesOf(endpoint("a", "", "description: second")), planner.Options{Refresh: true})
	c := change(t, p, "a")
	if c.Action != plan.Update || c.After["displayName"] != "ailanguageendpoint20261121120000" {
		t.Errorf("update plan: %s with displayName %v, want update keeping the cloud's name", c.Action, c.After["displayName"])
	}

	p = h.plan(resourcesOf(endpoint("a", "")), planner.Options{Refresh: true})
	if c := change(t, p, "a"); c.Action != plan.Update {
		t.Errorf("plan after removing description from the specs = %s, want update (the applied value is cleared)", c.Action)
	} else if _, kept := c.After["description"]; kept {
		t.Errorf("After still holds description: %v", c.After)
	}
}
