//go:build conformance

package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources/emulator/gcp"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// gcpService is the official Service Management client pointed at the
// emulator with token as its OAuth access token.
func gcpService(t *testing.T, ctx context.Context, srv *server.Server, token string) *servicemanagement.APIService {
	t.Helper()
	svc, err := servicemanagement.NewService(ctx,
		option.WithEndpoint(srv.URL+"/"),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})))
	if err != nil {
		t.Fatalf("servicemanagement.NewService: %v", err)
	}
	return svc
}

// wantGoogleError checks that err is a *googleapi.Error with the HTTP code,
// whose JSON body has error.status status and a message containing msg.
func wantGoogleError(t *testing.T, what string, err error, code int, status, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want %d %s", what, code, status)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("%s: error is not a *googleapi.Error: %v", what, err)
	}
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(ge.Body), &body); err != nil {
		t.Fatalf("%s: error body is not Google's JSON error: %v\n%s", what, err, ge.Body)
	}
	if ge.Code != code || body.Error.Code != code || body.Error.Status != status || ge.Message != body.Error.Message || !strings.Contains(ge.Message, msg) {
		t.Fatalf("%s: got %d %q (body %s), want %d %s with a message containing %q", what, ge.Code, ge.Message, ge.Body, code, status, msg)
	}
}

func TestGCPServiceManagement(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := testContext(t)
	svc := gcpService(t, ctx, srv, srv.Creds.GoogleAccessToken)

	// services.list shows the seeded services.
	var names []string
	if err := svc.Services.List().PageSize(1).Pages(ctx, func(p *servicemanagement.ListServicesResponse) error {
		for _, s := range p.Services {
			names = append(names, s.ServiceName)
		}
		return nil
	}); err != nil {
		t.Fatalf("services.list: %v", err)
	}
	for _, want := range []string{gcp.SeedService, gcp.SeedEmptyService} {
		if !slices.Contains(names, want) {
			t.Errorf("services.list: %v lacks %s", names, want)
		}
	}
	if unique := slices.Compact(slices.Sorted(slices.Values(names))); len(unique) != len(names) {
		t.Errorf("services.list page by page repeats services: %v", names)
	}
	consumed, err := svc.Services.List().ConsumerId("project:" + gcp.SeedConsumer).Do()
	if err != nil {
		t.Fatalf("services.list(consumerId): %v", err)
	}
	if !slices.ContainsFunc(consumed.Services, func(s *servicemanagement.ManagedService) bool { return s.ServiceName == gcp.SeedService }) {
		t.Errorf("services.list(consumerId=project:%s): %+v lacks %s", gcp.SeedConsumer, consumed.Services, gcp.SeedService)
	}

	// services.getIamPolicy, with every body the SDK can send.
	resource := "services/" + gcp.SeedService
	policy, err := svc.Services.GetIamPolicy(resource, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.getIamPolicy: %v", err)
	}
	if len(policy.Bindings) == 0 || policy.Etag == "" || policy.HTTPStatusCode != 200 {
		t.Fatalf("services.getIamPolicy: %+v", policy)
	}
	for name, req := range map[string]*servicemanagement.GetIamPolicyRequest{
		"nil request (null body)":  nil,
		"requestedPolicyVersion 3": {Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 3}},
	} {
		p, err := svc.Services.GetIamPolicy(resource, req).Context(ctx).Do()
		if err != nil {
			t.Fatalf("services.getIamPolicy with %s: %v", name, err)
		}
		if p.Etag != policy.Etag || len(p.Bindings) != len(policy.Bindings) {
			t.Errorf("services.getIamPolicy with %s: %+v, want %+v", name, p, policy)
		}
	}
	_, err = svc.Services.GetIamPolicy(resource, &servicemanagement.GetIamPolicyRequest{Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 2}}).Context(ctx).Do()
	wantGoogleError(t, "services.getIamPolicy with requestedPolicyVersion 2", err, 400, "INVALID_ARGUMENT", "")
	empty, err := svc.Services.GetIamPolicy("services/"+gcp.SeedEmptyService, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.getIamPolicy of a service without policy: %v", err)
	}
	if len(empty.Bindings) != 0 || empty.Etag == "" {
		t.Errorf("services.getIamPolicy of a service without policy: %+v", empty)
	}

	// services.consumers.getIamPolicy.
	consumerResource := resource + "/consumers/" + gcp.SeedConsumer
	cp, err := svc.Services.Consumers.GetIamPolicy(consumerResource, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.consumers.getIamPolicy: %v", err)
	}
	if len(cp.Bindings) == 0 || cp.Etag == "" {
		t.Fatalf("services.consumers.getIamPolicy: %+v", cp)
	}

	// setIamPolicy with the current etag replaces the policy and its etag.
	want := []*servicemanagement.Binding{{Role: "roles/servicemanagement.serviceConsumer", Members: []string{"user:bob@acme.example"}}}
	set, err := svc.Services.SetIamPolicy(resource, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: want, Etag: policy.Etag},
	}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.setIamPolicy with the current etag: %v", err)
	}
	if set.Etag == "" || set.Etag == policy.Etag || len(set.Bindings) != 1 || !slices.Equal(set.Bindings[0].Members, want[0].Members) {
		t.Fatalf("services.setIamPolicy: %+v (old etag %s)", set, policy.Etag)
	}
	reread, err := svc.Services.GetIamPolicy(resource, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.getIamPolicy after the set: %v", err)
	}
	if reread.Etag != set.Etag || len(reread.Bindings) != 1 || reread.Bindings[0].Role != want[0].Role {
		t.Errorf("services.getIamPolicy after the set: %+v, want %+v", reread, set)
	}

	// A stale etag is refused.
	_, err = svc.Services.SetIamPolicy(resource, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: want, Etag: policy.Etag},
	}).Context(ctx).Do()
	wantGoogleError(t, "services.setIamPolicy with a stale etag", err, 409, "ABORTED", "")
	_, err = svc.Services.Consumers.SetIamPolicy(consumerResource, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: want, Etag: "BwWWja0YfJA="},
	}).Context(ctx).Do()
	wantGoogleError(t, "services.consumers.setIamPolicy with a stale etag", err, 409, "ABORTED", "")
	cset, err := svc.Services.Consumers.SetIamPolicy(consumerResource, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: want, Etag: cp.Etag},
	}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.consumers.setIamPolicy with the current etag: %v", err)
	}
	if cset.Etag == cp.Etag || len(cset.Bindings) != 1 {
		t.Errorf("services.consumers.setIamPolicy: %+v (old etag %s)", cset, cp.Etag)
	}

	// An unknown service is 403 "not found or permission denied".
	const unknown = "nope.endpoints.nowhere.cloud.goog"
	_, err = svc.Services.GetIamPolicy("services/"+unknown, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	wantGoogleError(t, "services.getIamPolicy of an unknown service", err, 403, "PERMISSION_DENIED",
		"Service '"+unknown+"' not found or permission denied.")
	_, err = svc.Services.Consumers.GetIamPolicy("services/"+unknown+"/consumers/"+gcp.SeedConsumer, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	wantGoogleError(t, "services.consumers.getIamPolicy of an unknown service", err, 403, "PERMISSION_DENIED",
		"Service '"+unknown+"' not found or permission denied.")
}

func TestGCPBadToken(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := testContext(t)
	bad := gcpService(t, ctx, srv, "ya29.not-the-emulator-token")
	_, err := bad.Services.List().Context(ctx).Do()
	wantGoogleError(t, "services.list with a bad token", err, 401, "UNAUTHENTICATED", "invalid authentication credentials")
	_, err = bad.Services.GetIamPolicy("services/"+gcp.SeedService, &servicemanagement.GetIamPolicyRequest{}).Context(ctx).Do()
	wantGoogleError(t, "services.getIamPolicy with a bad token", err, 401, "UNAUTHENTICATED", "invalid authentication credentials")
}

// TestGCPIamPolicyWrites drives setIamPolicy and getIamPolicy of services
// and consumers with the official SDK as the IAM resources use them:
// read-modify-write with the etag, version 3 and conditions, update masks.
func TestGCPIamPolicyWrites(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := testContext(t)
	svc := gcpService(t, ctx, srv, srv.Creds.GoogleAccessToken)
	v3 := &servicemanagement.GetIamPolicyRequest{Options: &servicemanagement.GetPolicyOptions{RequestedPolicyVersion: 3}}
	type api struct {
		get func(*servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error)
		set func(*servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error)
	}
	service, consumer := "services/"+gcp.SeedEmptyService, "services/"+gcp.SeedService+"/consumers/conformance"
	for name, a := range map[string]api{
		service: {
			get: func(r *servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.GetIamPolicy(service, r).Context(ctx).Do()
			},
			set: func(r *servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.SetIamPolicy(service, r).Context(ctx).Do()
			},
		},
		consumer: {
			get: func(r *servicemanagement.GetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.Consumers.GetIamPolicy(consumer, r).Context(ctx).Do()
			},
			set: func(r *servicemanagement.SetIamPolicyRequest) (*servicemanagement.Policy, error) {
				return svc.Services.Consumers.SetIamPolicy(consumer, r).Context(ctx).Do()
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cur, err := a.get(v3)
			if err != nil {
				t.Fatalf("getIamPolicy: %v", err)
			}
			cond := &servicemanagement.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`}
			want := &servicemanagement.Policy{Version: 3, Etag: cur.Etag, Bindings: []*servicemanagement.Binding{
				{Role: "roles/servicemanagement.serviceConsumer", Members: []string{"user:a@acme.example"}},
				{Role: "roles/servicemanagement.serviceConsumer", Members: []string{"user:b@acme.example"}, Condition: cond},
			}, AuditConfigs: []*servicemanagement.AuditConfig{{Service: "allServices",
				AuditLogConfigs: []*servicemanagement.AuditLogConfig{{LogType: "DATA_READ"}}}}}
			// The default mask is "bindings,etag": the audit configs stay as they were.
			set, err := a.set(&servicemanagement.SetIamPolicyRequest{Policy: want})
			if err != nil {
				t.Fatalf("setIamPolicy: %v", err)
			}
			if set.Version != 3 || len(set.Bindings) != 2 || len(set.AuditConfigs) != 0 || set.Etag == cur.Etag {
				t.Fatalf("setIamPolicy without mask = %+v, want version 3, both bindings, no audit configs, a new etag", set)
			}
			want.Etag = set.Etag
			set, err = a.set(&servicemanagement.SetIamPolicyRequest{Policy: want, UpdateMask: "bindings,etag,auditConfigs"})
			if err != nil || len(set.AuditConfigs) != 1 {
				t.Fatalf("setIamPolicy with mask bindings,etag,auditConfigs = %+v, %v; want the audit config", set, err)
			}

			// Read in version 3, the conditions are whole; in version 1 they are not.
			got, err := a.get(v3)
			if err != nil || got.Version != 3 || got.Etag != set.Etag || len(got.Bindings) != 2 || got.Bindings[1].Condition == nil ||
				got.Bindings[1].Condition.Expression != cond.Expression {
				t.Fatalf("getIamPolicy version 3 = %+v, %v", got, err)
			}
			v1, err := a.get(&servicemanagement.GetIamPolicyRequest{})
			if err != nil || v1.Version != 1 || v1.Bindings[1].Condition != nil || !strings.Contains(v1.Bindings[1].Role, "_withcond_") {
				t.Fatalf("getIamPolicy version 1 = %+v, %v; want the conditional binding's role marked _withcond_", v1, err)
			}

			// A stale etag: 409 ABORTED, Google's body.
			_, err = a.set(&servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Version: 3, Etag: cur.Etag}})
			wantGoogleError(t, "setIamPolicy with a stale etag", err, 409, "ABORTED", "There were concurrent policy changes.")
			if ge := (*googleapi.Error)(nil); !errors.As(err, &ge) || len(ge.Errors) != 1 || ge.Errors[0].Reason != "aborted" {
				t.Errorf("setIamPolicy with a stale etag: errors %+v, want one of reason aborted, as Google answers", ge)
			}
			// Version 1 with the etag of a conditional policy is refused.
			_, err = a.set(&servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Version: 1, Etag: got.Etag,
				Bindings: []*servicemanagement.Binding{{Role: "roles/viewer", Members: []string{"user:a@acme.example"}}}}})
			wantGoogleError(t, "setIamPolicy version 1 of a conditional policy", err, 400, "INVALID_ARGUMENT", "version 3")
			// A conditional binding in version 1 is refused.
			_, err = a.set(&servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Version: 1,
				Bindings: []*servicemanagement.Binding{{Role: "roles/viewer", Members: []string{"user:a@acme.example"}, Condition: cond}}}})
			wantGoogleError(t, "setIamPolicy of a condition in version 1", err, 400, "INVALID_ARGUMENT", "version 3")

			// Clearing the policy, as a policy resource's delete does.
			cleared, err := a.set(&servicemanagement.SetIamPolicyRequest{Policy: &servicemanagement.Policy{Version: 3, Etag: got.Etag},
				UpdateMask: "bindings,etag,auditConfigs"})
			if err != nil || len(cleared.Bindings) != 0 || len(cleared.AuditConfigs) != 0 || cleared.Version != 1 {
				t.Fatalf("setIamPolicy of an empty policy = %+v, %v", cleared, err)
			}
		})
	}
}
