package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
)

// posOf returns "FILE:LINE:COL" of the first occurrence of needle in text,
// a file named file.
func posOf(t *testing.T, file, text, needle string) string {
	t.Helper()
	i := strings.Index(text, needle)
	if i < 0 {
		t.Fatalf("%q is not in the specs", needle)
	}
	line := strings.Count(text[:i], "\n") + 1
	col := i - strings.LastIndex(text[:i], "\n")
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// TestE2EUnsupportedRelation: a relation that the resource type does not
// have is an error of validate (offline) and of plan, at the relation,
// naming the relations the type has; nothing is sent to Datadog. A
// relation given by a config value is found too.
func TestE2EUnsupportedRelation(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	src := spec(policySpec("pol", id, fmt.Sprintf("        - relation: owner\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	at := posOf(t, "main.yaml", src, "owner")
	want := []string{at + ": error:", `field "bindings[1].relation"`, `resource type "dashboard" has no relation "owner"`, `"viewer" or "editor"`}

	r := w.rc("validate")
	if r.code != 1 {
		t.Fatalf("validate: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, want...)

	mark := e.mark()
	r = w.must(1, "plan")
	wantStderr(t, r, want...)
	r = w.must(1, "apply", "--auto-approve")
	wantStderr(t, r, want...)
	if calls := e.callsSince(mark, "/api/v2/restriction_policy/"); len(calls) != 0 {
		t.Errorf("plan and apply called the restriction-policy API: %v", calls)
	}
	if got := e.policy(id); len(got) != 0 {
		t.Errorf("the policy was written: %+v", got)
	}

	// The relation from config: known offline as well.
	src = "config:\n  rel:\n    type: string\n    default: runner\n" + spec(policySpec("pol", id, fmt.Sprintf("        - relation: ${rel}\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	r = w.rc("validate")
	if r.code != 1 {
		t.Fatalf("validate: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, posOf(t, "main.yaml", src, "${rel}")+": error:", `has no relation "runner"`)

	// Fixed: validate and apply pass.
	src = spec(policySpec("pol", id, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role2), ""))
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0, got:\n%s", r)
	}
	w.must(0, "apply", "--auto-approve")
	if got := e.policy(id); len(got) != 2 {
		t.Errorf("policy of %s = %+v, want 2 bindings", id, got)
	}
}

// TestE2EUnknownResourceType: a resource type that Datadog refuses
// restriction policies on passes validate (whether Datadog has it takes a
// request), and fails plan at resourceId, with Datadog's answer and a
// suggestion; the plan only read.
func TestE2EUnknownResourceType(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	src := spec(policySpec("pol", "dashbaord:abc", "", ""))
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0, got:\n%s", r)
	}
	mark := e.mark()
	r := w.must(1, "plan")
	wantStderr(t, r, posOf(t, "main.yaml", src, "dashbaord:abc")+": error:", `field "resourceId"`,
		"Invalid resource type: 'dashbaord' does not support restriction policies", `did you mean "dashboard"?`)
	calls := e.callsSince(mark, "/api/v2/restriction_policy/")
	if len(calls) != 1 || countMethod(calls, "GET") != 1 {
		t.Errorf("plan called %v, want one GET", calls)
	}
}

// TestE2EIAMMemberRefused: a member string IAM would refuse is an error
// of validate and plan at the member, saying why; a binding's members
// given by a lookup are checked at plan; nothing is written.
func TestE2EIAMMemberRefused(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	src := `resources:
  viewer:
    type: gcp:endpoints:ServiceIamMember
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      role: roles/viewer
      member: users:bob@acme.example
  readers:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      role: roles/servicemanagement.serviceConsumer
      members: [group:readers@acme.example, "serviceAccount:reader"]
`
	w.write("main.yaml", src)
	wantMember := []string{posOf(t, "main.yaml", src, "users:bob") + `: error: gcp:endpoints:ServiceIamMember "viewer": field "member": "users:bob@acme.example" is not an IAM member: IAM knows no principal type "users" (did you mean "user"?)`,
		posOf(t, "main.yaml", src, `"serviceAccount:reader"`) + `: error: gcp:endpoints:ServiceIamBinding "readers": field "members[1]"`, "serviceAccount: takes an email address"}
	r := w.rc("validate")
	if r.code != 1 {
		t.Fatalf("validate: want exit 1, got:\n%s", r)
	}
	wantStderr(t, r, wantMember...)
	mark := e.mark()
	r = w.must(1, "plan")
	wantStderr(t, r, wantMember...)

	// A member the specs take from a lookup is known at plan only.
	src = `variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
resources:
  viewer:
    type: gcp:endpoints:ServiceIamMember
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      role: roles/viewer
      member: user:${me.id}
`
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0 (the member is not known offline), got:\n%s", r)
	}
	r = w.must(1, "plan")
	wantStderr(t, r, posOf(t, "main.yaml", src, "user:${me.id}")+`: error: gcp:endpoints:ServiceIamMember "viewer": field "member"`, "user: takes an email address")
	for _, c := range e.callsSince(mark, "") {
		if strings.Contains(c.Path, ":setIamPolicy") {
			t.Errorf("a refused plan wrote an IAM policy: %v", c)
		}
	}
}

// TestE2EOCIPlanReadsRefusals: what OCI would refuse of an endpoint, and
// only a read tells, fails the plan (validate cannot know it): defined
// tags naming a tag namespace or key the tenancy lacks, read from OCI
// Identity, and a model deleted while the endpoint would deploy it. The
// plan reads and writes nothing.
func TestE2EOCIPlanReadsRefusals(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	oci := e.ociClient(t.TempDir())
	model := e.activeModel(t.TempDir())
	src := spec(endpointSpec("ep", model, "refusals-ep", "      definedTags:\n        Opertions.CostCenter: \"42\"\n        Operations.Team: nlp\n"))
	w.write("main.yaml", src)
	if r := w.rc("validate"); r.code != 0 {
		t.Fatalf("validate: want exit 0 (tags need a read), got:\n%s", r)
	}
	mark := e.mark()
	r := w.must(1, "plan")
	wantStderr(t, r, posOf(t, "main.yaml", src, "Opertions.CostCenter")+": error:",
		`oci:AiLanguage:Endpoint "ep": field "definedTags.Opertions.CostCenter": the tenancy has no tag namespace "Opertions"`, `(did you mean "Operations"?)`,
		`field "definedTags.Operations.Team": tag namespace "Operations" has no key "Team"`, "its keys: CostCenter, Environment, Owner")
	calls := e.callsSince(mark, "/20160918/tagNamespaces")
	if len(calls) == 0 || countMethod(calls, "GET") != len(calls) {
		t.Errorf("the plan's calls to OCI Identity: %v, want the tag namespaces read", calls)
	}
	if calls := e.callsSince(mark, "/20221001/"); countMethod(calls, "POST")+countMethod(calls, "PUT")+countMethod(calls, "DELETE") != 0 {
		t.Errorf("the plan wrote to OCI: %v", calls)
	}

	// Tags fixed, and the model deleted: the endpoint cannot deploy it.
	src = spec(endpointSpec("ep", model, "refusals-ep", "      definedTags: {\"Operations.CostCenter\": \"42\"}\n"))
	w.write("main.yaml", src)
	if _, err := oci.DeleteModel(t.Context(), ailanguage.DeleteModelRequest{ModelId: &model}); err != nil {
		t.Fatalf("OCI delete model: %v", err)
	}
	r = w.must(1, "apply", "--auto-approve")
	wantStderr(t, r, posOf(t, "main.yaml", src, model)+": error:", `field "modelId": model `+model)
	if calls := e.callsSince(mark, "/20221001/endpoints"); countMethod(calls, "POST") != 0 {
		t.Errorf("the refused apply created an endpoint: %v", calls)
	}
}
