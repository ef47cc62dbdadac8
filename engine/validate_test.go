package engine_test

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/engine/planner"
)

// planViolationsHead declares the config entries, a created endpoint and
// a lookup whose values the cases below put where the schemas say what
// may stand. Loading it alone reports nothing: every value that breaks a
// schema is known only when planning. (A value whose type is known from
// the specs alone, such as ${n} of a config of type integer, is checked
// when loading: see the specs package's TestTypesKnownOffline.)
const planViolationsHead = `config:
  n:
    type: object
    default: {v: 7}
  zero:
    type: integer
    default: 0
  long:
    type: string
    default: ` + "x" + `
  tags:
    type: object
    default: {a: 1, b: two, c: [3]}
  dtags:
    type: object
    default: {"ns.ok": v, bad: v}
  bindings:
    type: array
    default:
      - {relation: viewer, principal: ["user:ada"]}
      - {relation: editor}
      - {relation: 3, principals: ["nobody", "team:x"]}
  binding:
    type: object
    default: {relation: viewer, principals: "user:ada"}
  who:
    type: string
    default: nobody
  secretN:
    type: object
    secret: true
    default: {v: 5}
variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
resources:
  made:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..x
      modelId: ocid1.ailanguagemodel.oc1..x
`

// TestPlanViolations checks the schema violations found when planning,
// in values that were not known when the specs were loaded: each at the
// expression that gave the value, with the message and detail loading
// gives for a literal.
func TestPlanViolations(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 300)
	for name, tc := range map[string]struct {
		body string // resources or variables appended to planViolationsHead
		want []string
	}{
		"valid, with unknown values and defaults": {body: `  ok:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ${made.compartmentId}
      modelId: m-${n.v}
      displayName: ${made.id}
      description: ${me.email}
      freeformTags: {a: "${made.id}", b: "${long}"}
      definedTags: {"ns.k": "${made.id}"}
  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:${made.id}
      bindings:
        - relation: viewer
          principals: ["user:${me.handle}", "${made.id}"]
        - ${made.freeformTags}
`},
		"a config of the wrong type": {body: `  r:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ${n.v}
      modelId: x
      description: "${secretN.v}"
      displayName: ${secretN.v}
`, want: []string{
			`spec.yaml:46:22: error: field "compartmentId": expected string, got integer`,
			`spec.yaml:48:21: error: field "description": expected string, got integer`,
			`spec.yaml:49:20: error: field "displayName": expected string, got integer`,
		}},
		"a bound broken": {body: `  r:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: x
      inferenceUnits: ${zero}
      displayName: ${long}
`, want: []string{
			`spec.yaml:48:23: error: field "inferenceUnits": must be at least 1`,
			`spec.yaml:49:20: error: field "displayName": must be at most 255 characters long`,
		}},
		"a map of the wrong values": {body: `  r:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: x
      freeformTags: ${tags}
      definedTags: ${dtags}
`, want: []string{
			`spec.yaml:48:21: error: field "freeformTags.a": expected string, got integer`,
			`spec.yaml:48:21: error: field "freeformTags.c": expected string, got array`,
			`spec.yaml:49:20: error: field "definedTags.bad": key "bad" must have the form "namespace.key"`,
		}},
		"a literal key given a computed value": {body: `  r:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: x
      definedTags: {bad: "${who}", "ns.k": "${n.v}"}
`, want: []string{
			`spec.yaml:48:27: error: field "definedTags.bad": key "bad" must have the form "namespace.key"`,
			`spec.yaml:48:45: error: field "definedTags.ns.k": expected string, got integer`,
		}},
		"an unknown or output field given a computed value": {body: `  r:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: c
      modelId: x
      displayNam: ${who}
      state: ${who}
`, want: []string{
			`spec.yaml:48:7: error: unknown field "displayNam" on oci:AiLanguage:Endpoint (did you mean "displayName"?)` +
				"\n\tvalid fields: \"compartmentId\", \"definedTags\", \"description\", \"displayName\", \"freeformTags\", \"inferenceUnits\", \"modelId\"",
			`spec.yaml:49:7: error: field "state" of oci:AiLanguage:Endpoint is an output and cannot be set`,
		}},
		"a list of wrong objects": {body: `  r:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: dashboard:x
      bindings: ${bindings}
`, want: []string{
			`spec.yaml:47:17: error: unknown field "principal" on datadog:RestrictionPolicy (did you mean "principals"?)` + "\n\tvalid fields: \"principals\", \"relation\"",
			`spec.yaml:47:17: error: datadog:RestrictionPolicy "r": missing required field "principals"`,
			`spec.yaml:47:17: error: field "bindings[2].principals[0]": must match pattern "^(role|team|user|org):.+"`,
			`spec.yaml:47:17: error: field "bindings[2].relation": expected string, got integer`,
		}},
		"computed items": {body: `  r:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: ${who}
      bindings:
        - ${binding}
        - relation: viewer
          principals: ["${who}", "user:${who}", "${n.v}"]
`, want: []string{
			`spec.yaml:46:19: error: field "resourceId": must have the form "type:id", such as "dashboard:abc-def-ghi"`,
			`spec.yaml:48:11: error: field "bindings[0].principals": expected array, got string`,
			`spec.yaml:50:25: error: field "bindings[1].principals[0]": must match pattern "^(role|team|user|org):.+"`,
			`spec.yaml:50:50: error: field "bindings[1].principals[2]": expected string, got integer`,
		}},
		"lookup arguments": {body: `  pol:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${n.v}
  pol2:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: ${who}
        etag: ${who}
`, want: []string{
			`spec.yaml:41:22: error: field "serviceName": expected string, got integer`,
			`spec.yaml:47:9: error: field "etag" of gcp:endpoints:getServiceIamPolicy is an output and cannot be set`,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(planViolationsHead, `default: x`+"\n", "default: "+long+"\n", 1)
			if strings.HasPrefix(tc.body, "  pol:\n    fn::invoke") {
				src = strings.Replace(src, "resources:\n", tc.body+"resources:\n", 1)
			} else {
				src += tc.body
			}
			h := newHarness(t)
			_, diags := h.makePlan(src, planner.Options{})
			var got []string
			for _, d := range diags {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
