package engine_test

import (
	"strings"
	"testing"

	"reconcile/engine/planner"
	"reconcile/engine/value"
)

// Pulumi YAML allows a resource's properties to be one expression giving
// an object: a config object, a variable, a secret. Its keys are field
// names in either spelling; a secret object makes every input secret.
func TestPropertiesAsOneExpression(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `
config:
  props:
    type: object
    default:
      compartment_id: ocid1.compartment.oc1..x
      model_id: ocid1.ailanguagemodel.oc1..m1
      displayName: from-config
variables:
  secretProps:
    fn::secret:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName: hidden-name-1
resources:
  a:
    type: oci:AiLanguage:Endpoint
    properties: ${props}
  b:
    type: oci:AiLanguage:Endpoint
    properties: ${secretProps}
  c:
    type: oci:AiLanguage:Endpoint
    properties:
      fn::secret:
        compartmentId: ocid1.compartment.oc1..x
        modelId: ocid1.ailanguagemodel.oc1..m1
        displayName: hidden-name-2
  d:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..m1
      displayName: after-${a.id}
outputs:
  aName: ${a.displayName}
  bName: ${b.displayName}
`
	p, res := h.apply(src)
	if got, want := sortedActions(p), "a:create b:create c:create d:create"; got != want || res.Err() != nil {
		t.Fatalf("plan = %q (%v), want %q", got, res.Err(), want)
	}
	a := h.record("a")
	if a.Inputs["displayName"] != "from-config" || a.Inputs["compartmentId"] != "ocid1.compartment.oc1..x" || a.Inputs["inferenceUnits"] != int64(1) {
		t.Errorf("a's inputs = %v, want the config object's, keys canonical, with the schema's default", a.Inputs)
	}
	for _, name := range []string{"b", "c"} {
		r := h.record(name)
		for _, k := range []string{"displayName", "compartmentId", "modelId"} {
			if !value.IsSealed(r.Inputs[k]) {
				t.Errorf("%s's input %s = %v, want it sealed: the whole object is secret", name, k, r.Inputs[k])
			}
		}
	}
	if res.Outputs["aName"] != "from-config" || !value.IsSecret(res.Outputs["bName"]) {
		t.Errorf("outputs = %v, want aName plain and bName secret", res.Outputs)
	}
	if p2 := h.plan(src, planner.Options{Refresh: true}); p2.HasChanges() {
		t.Errorf("second plan = %q, want no changes", actions(p2))
	}
}

// The inputs given as one expression are validated once evaluated, with
// every problem at the expression.
func TestPropertiesExpressionChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct{ value, want string }{
		{"{compartmentId: x, modelId: m, displayNme: n}", `unknown field "displayNme" on oci:AiLanguage:Endpoint (did you mean "displayName"?)`},
		{"{modelId: m}", `missing required field "compartmentId"`},
		{"{compartmentId: x, compartment_id: y, modelId: m}", `field "compartmentId" is given twice, as "compartmentId" and "compartment_id"`},
		{"just-text", `properties of "ep" must be an object of inputs, got string "just-text"`},
		{"[a, b]", `properties of "ep" must be an object of inputs, got array`},
	} {
		src := "variables:\n  inputs: " + c.value + "\nresources:\n  ep:\n    type: oci:AiLanguage:Endpoint\n    properties: ${inputs}\n"
		_, diags := h.makePlan(src, planner.Options{})
		if !diags.HasErrors() || !strings.Contains(diags[0].Summary, c.want) || diags[0].Pos.Line != 6 || diags[0].Pos.Col != 17 {
			t.Errorf("properties: ${inputs} with inputs %s: %v; want an error at spec.yaml:6:17 containing %q", c.value, diags, c.want)
		}
	}
}
