//go:build conformance

package conformance_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/DataDog/datadog-api-client-go/v2/api/datadog"
	"github.com/DataDog/datadog-api-client-go/v2/api/datadogV2"
	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"google.golang.org/api/servicemanagement/v1"
)

// buildReconcile builds the product binary into a temporary directory.
func buildReconcile(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reconcile")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/reconcile-dev/reconcile/cmd/reconcile").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestChain applies the whole chain that testdata/examples declares with
// the real binary on the emulator: a project, a model trained in it and an
// endpoint serving it; an IAM policy built by getIAMPolicy and set on a
// service; a member granted on a consumer policy; a restriction policy
// whose org principal comes from getCurrentUser. The official SDKs see
// every object; a second plan is clean; a member granted out of band is
// drift, named, and the next apply takes it away; destroy leaves nothing.
func TestChain(t *testing.T) {
	bin := buildReconcile(t)
	srv, dir := startEmulator(t)
	examples, err := filepath.Abs("../../testdata/examples")
	if err != nil {
		t.Fatal(err)
	}
	stateFile := filepath.Join(t.TempDir(), "state.db")
	run := func(want int, args ...string) string {
		t.Helper()
		args = append(args, "-f", examples, "--state", stateFile, "--emulator="+srv.URL, "--no-color")
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("reconcile %s: %v", strings.Join(args, " "), err)
		}
		if code != want {
			t.Fatalf("reconcile %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	ctx := testContext(t)
	oci := ociClient(t, srv, filepath.Join(dir, "credentials", "oci_config"))
	gcp := gcpService(t, ctx, srv, srv.Creds.GoogleAccessToken)
	ddCtx := datadogContext(ctx, srv, srv.Creds.DatadogAPIKey, srv.Creds.DatadogAppKey)
	dd := datadog.NewAPIClient(datadog.NewConfiguration())
	const (
		service  = "services/inventory.endpoints.acme-prod.cloud.goog"
		consumer = "services/orders.endpoints.acme-prod.cloud.goog/consumers/acme-partner"
		dash     = "dashboard:abc-def-ghi"
		eve      = "user:eve@acme.example"
	)
	policyOf := func(name string) *servicemanagement.Policy {
		t.Helper()
		var p *servicemanagement.Policy
		var err error
		if strings.Contains(name, "/consumers/") {
			p, err = gcp.Services.Consumers.GetIamPolicy(name, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
		} else {
			p, err = gcp.Services.GetIamPolicy(name, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
		}
		if err != nil {
			t.Fatalf("getIamPolicy %s: %v", name, err)
		}
		return p
	}
	members := func(p *servicemanagement.Policy) []string {
		var out []string
		for _, b := range p.Bindings {
			for _, m := range b.Members {
				out = append(out, b.Role+" "+m)
			}
		}
		slices.Sort(out)
		return out
	}
	tenancy := srv.Creds.OCITenancy
	activeByName := func(kind string) map[string]string {
		t.Helper()
		out := map[string]string{}
		switch kind {
		case "project":
			r, err := oci.ListProjects(ctx, ailanguage.ListProjectsRequest{CompartmentId: &tenancy})
			if err != nil {
				t.Fatalf("ListProjects: %v", err)
			}
			for _, p := range r.Items {
				if p.LifecycleState == ailanguage.ProjectLifecycleStateActive {
					out[str(p.DisplayName)] = str(p.Id)
				}
			}
		case "model":
			r, err := oci.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &tenancy})
			if err != nil {
				t.Fatalf("ListModels: %v", err)
			}
			for _, m := range r.Items {
				if m.LifecycleState == ailanguage.ModelLifecycleStateActive {
					out[str(m.DisplayName)+" in "+str(m.ProjectId)] = str(m.Id)
				}
			}
		case "endpoint":
			r, err := oci.ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: &tenancy})
			if err != nil {
				t.Fatalf("ListEndpoints: %v", err)
			}
			for _, e := range r.Items {
				if e.LifecycleState == ailanguage.EndpointLifecycleStateActive {
					out[str(e.DisplayName)+" on "+str(e.ModelId)] = str(e.Id)
				}
			}
		}
		return out
	}

	run(0, "apply", "--auto-approve")

	// OCI: the endpoint serves the model, which was trained in the project.
	project := activeByName("project")["reviews"]
	model := activeByName("model")["reviews-classifier in "+project]
	if project == "" || model == "" || activeByName("endpoint")["reviews on "+model] == "" {
		t.Fatalf("the OCI chain is not there: projects %v, models %v, endpoints %v", activeByName("project"), activeByName("model"), activeByName("endpoint"))
	}
	// GCP: the service's whole policy is the one getIAMPolicy built, and
	// the partner's member is granted on the consumer policy.
	wantService := []string{
		"roles/servicemanagement.serviceConsumer group:inventory-clients@acme.example",
		"roles/servicemanagement.serviceConsumer serviceAccount:checkout@acme-prod.iam.gserviceaccount.com",
		"roles/servicemanagement.serviceController serviceAccount:inventory-esp@acme-prod.iam.gserviceaccount.com",
	}
	if got := members(policyOf(service)); !slices.Equal(got, wantService) {
		t.Errorf("%s: %q, want %q", service, got, wantService)
	}
	if got := members(policyOf(consumer)); !slices.Contains(got, "roles/servicemanagement.serviceConsumer group:partner-devs@partner.example") {
		t.Errorf("%s: %q, want the partner's member among them", consumer, got)
	}
	// Datadog: the editors are the current user's org.
	me, _, err := datadogV2.NewUsersApi(dd).GetCurrentUser(ddCtx)
	if err != nil {
		t.Fatalf("GetCurrentUser: %v", err)
	}
	org := "org:" + me.Data.Relationships.Org.Data.Id
	policies := datadogV2.NewRestrictionPoliciesApi(dd)
	p, _, err := policies.GetRestrictionPolicy(ddCtx, dash)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy: %v", err)
	}
	if b := p.Data.Attributes.Bindings; len(b) == 0 || b[0].Relation != "editor" || !slices.Equal(b[0].Principals, []string{org}) {
		t.Errorf("%s: bindings %+v, want the editors to be %s", dash, b, org)
	}

	// A second plan is clean.
	run(0, "plan", "--detailed-exitcode")

	// A member granted outside reconcile is drift, named; the next apply
	// takes it away.
	cur := policyOf(service)
	cur.Bindings[0].Members = append(cur.Bindings[0].Members, eve)
	if _, err := gcp.Services.SetIamPolicy(service, &servicemanagement.SetIamPolicyRequest{Policy: cur}).Context(ctx).Do(); err != nil {
		t.Fatalf("setIamPolicy (out of band): %v", err)
	}
	if out := run(2, "drift"); !strings.Contains(out, eve) {
		t.Errorf("drift does not name %s:\n%s", eve, out)
	}
	run(0, "apply", "--auto-approve")
	if got := members(policyOf(service)); !slices.Equal(got, wantService) {
		t.Errorf("after the apply, %s: %q, want %q", service, got, wantService)
	}
	run(0, "drift")

	// Destroy leaves nothing behind.
	run(0, "destroy", "--auto-approve")
	for _, kind := range []string{"project", "model", "endpoint"} {
		for name, id := range activeByName(kind) {
			if strings.Contains(id, "emulator") {
				continue // seeded, not ours
			}
			t.Errorf("after destroy, the %s %s (%s) is still ACTIVE", kind, name, id)
		}
	}
	if got := members(policyOf(service)); len(got) != 0 {
		t.Errorf("after destroy, %s still grants %q", service, got)
	}
	if got := members(policyOf(consumer)); slices.Contains(got, "roles/servicemanagement.serviceConsumer group:partner-devs@partner.example") {
		t.Errorf("after destroy, %s still grants the partner's member: %q", consumer, got)
	}
	p, _, err = policies.GetRestrictionPolicy(ddCtx, dash)
	if err != nil {
		t.Fatalf("GetRestrictionPolicy after destroy: %v", err)
	}
	if b := p.Data.Attributes.Bindings; len(b) != 0 {
		t.Errorf("after destroy, %s still has bindings %+v", dash, b)
	}
}
