package specs_test

import (
	"testing"

	"github.com/reconcile-dev/reconcile/engine/specs"
)

// URNs are Pulumi's: urn:pulumi:STACK::PROJECT::TYPE::NAME, with the
// provider's type token, the name: key in place of the logical name, and
// the types of the parents before the resource's own, joined by "$".
func TestURN(t *testing.T) {
	src := `
resources:
  ep:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: ocid1.compartment.oc1..example
      modelId: ocid1.ailanguagemodel.oc1.iad.example
  policy:
    type: datadog:index:RestrictionPolicy
    name: renamed-policy
    properties:
      resourceId: dashboard:abc-def-ghi
      bindings: [{relation: editor, principals: ["org:x"]}]
  child:
    type: gcp:endpoints:ServiceIamMember
    properties:
      serviceName: orders.endpoints.acme.cloud.goog
      role: roles/viewer
      member: user:a@acme.example
    options:
      parent: ${ep}
  grandchild:
    type: gcp:endpoints/serviceIamBinding:ServiceIamBinding
    properties:
      serviceName: orders.endpoints.acme.cloud.goog
      role: roles/editor
      members: [user:b@acme.example]
    options:
      parent: ${child}
  legacy:
    type: oci:AiLanguage:Endpoint
    get:
      id: ocid1.ailanguageendpoint.oc1.iad.legacy
`
	srcs := []specs.Source{{Name: "main.yaml", Data: []byte(src)}}
	s, diags := specs.LoadWith(t.TempDir(), srcs, nil, specs.LoadOptions{Project: "acme", Stack: "prod"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	const ep = "oci:AiLanguage/endpoint:Endpoint"
	const member = "gcp:endpoints/serviceIamMember:ServiceIamMember"
	for name, want := range map[string]string{
		"ep":         "urn:pulumi:prod::acme::" + ep + "::ep",
		"policy":     "urn:pulumi:prod::acme::datadog:index/restrictionPolicy:RestrictionPolicy::renamed-policy",
		"child":      "urn:pulumi:prod::acme::" + ep + "$" + member + "::child",
		"grandchild": "urn:pulumi:prod::acme::" + ep + "$" + member + "$gcp:endpoints/serviceIamBinding:ServiceIamBinding::grandchild",
		"legacy":     "urn:pulumi:prod::acme::" + ep + "::legacy",
		"nothing":    "",
	} {
		if got := s.URN(name); got != want {
			t.Errorf("URN(%q) = %q, want %q", name, got, want)
		}
	}
	// Without a project file the project is named after its directory, and
	// the stack is "default".
	dir := t.TempDir() + "/orders"
	s, diags = specs.Load(dir, srcs, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if got, want := s.URN("ep"), "urn:pulumi:default::orders::"+ep+"::ep"; got != want {
		t.Errorf("URN without project or stack = %q, want %q", got, want)
	}
	if deps := s.Graph().Deps("grandchild"); len(deps) != 1 || deps[0] != "child" {
		t.Errorf("grandchild depends on %v, want its parent", deps)
	}
}
