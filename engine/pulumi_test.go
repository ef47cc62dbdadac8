package engine_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/planner"
	"github.com/reconcile-dev/reconcile/engine/specs"
	"github.com/reconcile-dev/reconcile/engine/value"
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

// options.additionalSecretOutputs makes the fields it names secret: an
// input and an output of the cloud's, in state (digests), in the plan, in
// what references them and in the stack outputs; references still get
// their values.
func TestAdditionalSecretOutputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := resourcesOf(
		endpoint("ep", "ep-name", "options.additionalSecretOutputs: [display_name, state]"),
		endpoint("b", "b", "description: state-${ep.state}"),
	) + "outputs:\n  state: ${ep.state}\n  name: ${ep.displayName}\n  id: ${ep.id}\n"
	p, res := h.apply(src)
	if res.Err() != nil {
		t.Fatal(res.Err())
	}
	for _, c := range p.Changes {
		if c.Addr == "ep" && !value.IsSecret(c.After["displayName"]) {
			t.Errorf("the plan shows ep's displayName as %v, want it secret", c.After["displayName"])
		}
	}
	ep, b := h.record("ep"), h.record("b")
	if !value.IsSealed(ep.Inputs["displayName"]) || !value.IsSealed(ep.Outputs["state"]) {
		t.Errorf("ep in state: displayName %v, state %v; want both sealed", ep.Inputs["displayName"], ep.Outputs["state"])
	}
	if !value.IsSealed(b.Inputs["description"]) {
		t.Errorf("b's description in state = %v, want it sealed: it is made of a secret", b.Inputs["description"])
	}
	if res.Outputs["state"] != (value.Secret{Value: "ACTIVE"}) || res.Outputs["name"] != (value.Secret{Value: "ep-name"}) || value.IsSecret(res.Outputs["id"]) {
		t.Errorf("outputs = %v, want state and name secret with their values, id plain", res.Outputs)
	}
	for _, opts := range []planner.Options{{Refresh: true}, {Refresh: false}} {
		p := h.plan(src, opts)
		if p.HasChanges() {
			t.Errorf("plan %+v after the apply = %q, want no changes", opts, actions(p))
		}
		for _, c := range p.Changes {
			if c.Addr == "ep" && (!value.IsSecret(c.After["state"]) || !value.IsSecret(c.Before["state"])) {
				t.Errorf("plan %+v shows ep's state as %v -> %v, want it secret", opts, c.Before["state"], c.After["state"])
			}
		}
		if got := p.Outputs["state"]; got != (value.Secret{Value: "ACTIVE"}) {
			t.Errorf("plan %+v: output state = %#v, want the secret value", opts, got)
		}
	}
	// An apply with nothing to change keeps the digests and the values.
	_, res = h.apply(src)
	if res.Err() != nil || res.Outputs["state"] != (value.Secret{Value: "ACTIVE"}) || !value.IsSealed(h.record("ep").Outputs["state"]) {
		t.Errorf("second apply: %v, outputs %v, ep's state %v", res.Err(), res.Outputs, h.record("ep").Outputs["state"])
	}
}

// Every variable is evaluated, whether anything uses it or not, as Pulumi
// evaluates the whole program: the errors of unused ones are reported, at
// their expressions, and nothing is planned.
func TestUnusedVariablesEvaluated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `config:
  zones:
    type: List<String>
    default: [a, b]
variables:
  pick:
    fn::select: [5, "${zones}"]
  one:
    fn::singleOrNone: ${zones}
  file:
    fn::readFile: missing.txt
  fine: ok
resources:
` + endpoint("ep", "ep")
	_, diags := h.makePlan(src, planner.Options{})
	want := map[int32]string{7: "fn::select index 5 out of range (length 2)", 9: "fn::singleOrNone takes a list of 0 or 1 items, got 2", 11: `fn::readFile "missing.txt"`}
	if len(diags) != len(want) || !diags.HasErrors() {
		t.Fatalf("diagnostics %v, want one for each unused variable that fails", diags)
	}
	for _, d := range diags {
		if msg, ok := want[d.Pos.Line]; !ok || !strings.Contains(d.Summary, msg) {
			t.Errorf("diagnostic %s, want at one of %v", d, want)
		}
	}
}

// A program that is its own project file, as Pulumi reads Pulumi.yaml,
// names the project at its top level: ${NAME:key} reads its config (as in
// Pulumi's project-config-ref test, a reference to another namespace
// being an error), ${pulumi.project} is the name and so is the project of
// every URN.
func TestProjectNamedByTheProgram(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := `name: test-yaml
runtime: yaml
config:
  foo: "hello world"
variables:
  valid1: ${foo}
  valid2: ${test-yaml:foo}
resources:
` + endpoint("ep", "${valid2}") + `outputs:
  valid1: ${valid1}
  valid2: ${valid2}
  project: ${pulumi.project}
  urn: ${ep.urn}
`
	// The URN and ${pulumi.project} alone, as in Pulumi's
	// TestVariablePulumi.
	p := h.plan("name: test-yaml\nresources:\n"+endpoint("ep", "ep")+"outputs:\n  project: ${pulumi.project}\n  urn: ${ep.urn}\n", planner.Options{})
	if p.Outputs["project"] != "test-yaml" || p.Outputs["urn"] != "urn:pulumi:default::test-yaml::oci:AiLanguage/endpoint:Endpoint::ep" {
		t.Errorf("outputs %v, want the project test-yaml in ${pulumi.project} and the URN", p.Outputs)
	}
	p = h.plan(src, planner.Options{})
	for name, want := range map[string]string{
		"valid1":  "hello world",
		"valid2":  "hello world",
		"project": "test-yaml",
		"urn":     "urn:pulumi:default::test-yaml::oci:AiLanguage/endpoint:Endpoint::ep",
	} {
		if got := p.Outputs[name]; got != want {
			t.Errorf("output %s = %#v, want %q", name, got, want)
		}
	}
	bad := strings.Replace(src, "  valid2: ${test-yaml:foo}\n", "  valid2: ${test-yaml:foo}\n  invalid: ${wrong-namespace:foo}\n", 1)
	_, diags := specs.Load(t.TempDir(), []specs.Source{{Name: "spec.yaml", Data: []byte(bad)}}, nil)
	if len(diags) != 1 || diags[0].Pos.Line != 8 || diags[0].Pos.Col != 12 || !strings.Contains(diags[0].Summary, `nothing named "wrong-namespace:foo"`) ||
		!strings.Contains(diags[0].Detail, `this project is "test-yaml"`) {
		t.Errorf("a reference to another project's config: %v, want one error at spec.yaml:8:12", diags)
	}
}
