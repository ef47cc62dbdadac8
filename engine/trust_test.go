package engine_test

import (
	"strings"
	"testing"

	"reconcile/engine"
	"reconcile/resources"
)

// Regression tests of the trust issue: each names the defect it guards.

// A reference to an input the specs leave unset is the live value after
// apply (null when the cloud has none either), "(known after apply)" while
// the resource is still to be created; never the whole parent object.
func TestReferenceToUnsetInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(endpoint("ep", "ep")) + `
outputs:
  description: ${ep.description}
  freeform: ${ep.freeformTags}
`
	p := h.plan(src, engine.PlanOptions{Refresh: true})
	for _, name := range []string{"description", "freeform"} {
		if _, ok := p.Outputs[name].(engine.Unknown); !ok {
			t.Errorf("planned output %s = %#v, want (known after apply)", name, p.Outputs[name])
		}
	}
	_, res := h.mustApply(src)
	if v, ok := res.Outputs["description"]; !ok || v != nil {
		t.Errorf("output description after apply = %#v (present %v), want null", v, ok)
	}

	// The cloud fills in a value the specs leave unset: references read it,
	// also from state in a plan that reads nothing.
	id := h.record("ep").ID
	obj, _ := h.cloud.object(id)
	obj["description"] = "filled by the cloud"
	h.cloud.put(id, obj)
	_, res = h.mustApply(src)
	if got := res.Outputs["description"]; got != "filled by the cloud" {
		t.Errorf("output description = %#v, want the cloud's value", got)
	}
	p = h.plan(src, engine.PlanOptions{Refresh: false})
	if got := p.Outputs["description"]; got != "filled by the cloud" {
		t.Errorf("output description planned from state = %#v, want the cloud's value", got)
	}
}

// ${obj.missing} on a map the specs give is an error at the reference.
func TestReferenceToMissingKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := "variables:\n  obj:\n    a: 1\noutputs:\n  x: ${obj.missing}\n"
	_, diags := h.makePlan(src, engine.PlanOptions{})
	if !diags.HasErrors() {
		t.Fatalf("plan of ${obj.missing}: no error")
	}
	d := diags[0]
	if d.Pos.Line != 5 || d.Pos.Col != 6 || !strings.Contains(d.Summary, `no key "missing"`) {
		t.Errorf("diagnostic = %s, want spec.yaml:5:6 naming the missing key", d)
	}
}

var _ = resources.Attrs{}
