package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	servicemanagement "google.golang.org/api/servicemanagement/v1"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

const (
	seedCompartment = "ocid1.compartment.oc1..team"
	seedProject     = "ocid1.ailanguageproject.oc1.iad.teamproject"
	seedModel       = "ocid1.ailanguagemodel.oc1.iad.teammodel"
	seedFailedModel = "ocid1.ailanguagemodel.oc1.iad.teamfailed"
	seedBuiltinProj = "ocid1.ailanguageproject.oc1.iad.emulatorproject" // Seed's project
	seedService     = "billing.endpoints.acme-prod.cloud.goog"
	seedUserID      = "0b8f3c1e-5a6d-4f70-9e21-3c4d5e6f7a8b"
	seedRole        = "role:11111111-2222-4333-8444-555555555555"
	seedTeam        = "team:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
)

// seedJSON holds an object of every kind, some referring to built-in ones.
const seedJSON = `{
  "oci": {
    "compartments": [{"id": "` + seedCompartment + `", "name": "team"}],
    "projects": [{"id": "` + seedProject + `", "displayName": "team-project", "compartmentId": "` + seedCompartment + `",
                  "description": "seeded", "freeformTags": {"team": "a"}}],
    "models": [
      {"id": "` + seedModel + `", "displayName": "team-classifier", "projectId": "` + seedProject + `", "state": "ACTIVE", "version": "2.0"},
      {"id": "` + seedFailedModel + `", "displayName": "team-ner", "projectId": "` + seedBuiltinProj + `",
       "state": "FAILED", "lifecycleDetails": "no data", "modelType": "NAMED_ENTITY_RECOGNITION"}
    ]
  },
  "gcp": {
    "services": [{"name": "` + seedService + `", "producerProjectId": "acme-prod",
                  "policy": {"bindings": [{"role": "roles/servicemanagement.serviceConsumer", "members": ["user:a@acme.example"]}]}}],
    "consumerPolicies": [
      {"service": "` + seedService + `", "consumer": "acme-other",
       "policy": {"bindings": [{"role": "roles/servicemanagement.serviceConsumer", "members": ["group:other@acme.example"]}]}},
      {"service": "orders.endpoints.acme-prod.cloud.goog", "consumer": "acme-other",
       "policy": {"bindings": [{"role": "roles/servicemanagement.serviceConsumer", "members": ["user:b@acme.example"]}]}}
    ]
  },
  "datadog": {
    "user": {"id": "` + seedUserID + `", "email": "dev@acme.example", "name": "Acme Dev"},
    "policies": [
      {"resourceId": "dashboard:xyz", "bindings": [{"relation": "viewer", "principals": ["` + seedRole + `"]}]},
      {"resourceId": "notebook:42", "bindings": [{"relation": "editor", "principals": ["` + seedTeam + `"]}]}
    ]
  }
}`

// seedObjects is how many objects seedJSON holds.
const seedObjects = 1 + 1 + 2 + 1 + 2 + 1 + 2

func writeSeed(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startSeeded(t *testing.T, dir, seed string) *server.Server {
	t.Helper()
	srv, err := server.Start(server.Options{DataDir: dir, SeedFile: seed})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// clients of the three APIs, configured as the emulator's users are: the
// official OCI and Service Management clients, and plain HTTP for Datadog.
type clients struct {
	oci     ailanguage.AIServiceLanguageClient
	gcp     *servicemanagement.APIService
	ddURL   string
	ddKeys  [2]string // DD-API-KEY, DD-APPLICATION-KEY
	context context.Context
}

func newClients(t *testing.T, srv *server.Server, dir string) clients {
	t.Helper()
	p, err := common.ConfigurationProviderFromFile(filepath.Join(dir, "credentials", "oci_config"), "")
	if err != nil {
		t.Fatal(err)
	}
	oci, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(p)
	if err != nil {
		t.Fatal(err)
	}
	oci.Host = srv.URL
	env := server.Env(srv.Creds)
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: env["GOOGLE_OAUTH_ACCESS_TOKEN"]}),
	}}
	gcp, err := servicemanagement.NewService(t.Context(), option.WithEndpoint(srv.URL+"/"), option.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return clients{
		oci: oci, gcp: gcp,
		ddURL:   srv.URL,
		ddKeys:  [2]string{env["DD_API_KEY"], env["DD_APP_KEY"]},
		context: t.Context(),
	}
}

// policyData is the JSON of a policy's auditConfigs and bindings, as the
// gcp:endpoints lookups render it.
func policyData(t *testing.T, p *servicemanagement.Policy) string {
	t.Helper()
	b, err := json.Marshal(&servicemanagement.Policy{AuditConfigs: p.AuditConfigs, Bindings: p.Bindings})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (c clients) servicePolicy(t *testing.T, service string) string {
	t.Helper()
	p, err := c.gcp.Services.GetIamPolicy("services/"+service, &servicemanagement.GetIamPolicyRequest{}).Context(c.context).Do()
	if err != nil {
		t.Fatalf("getIamPolicy(services/%s): %v", service, err)
	}
	return policyData(t, p)
}

func (c clients) consumerPolicy(t *testing.T, service, consumer string) string {
	t.Helper()
	name := "services/" + service + "/consumers/" + consumer
	p, err := c.gcp.Services.Consumers.GetIamPolicy(name, &servicemanagement.GetIamPolicyRequest{}).Context(c.context).Do()
	if err != nil {
		t.Fatalf("getIamPolicy(%s): %v", name, err)
	}
	return policyData(t, p)
}

// dd makes a Datadog API call with the emulator's keys, fails the test
// unless it answers want, and decodes the answer into out when not nil.
func (c clients) dd(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.context, method, c.ddURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("DD-API-KEY", c.ddKeys[0])
	req.Header.Set("DD-APPLICATION-KEY", c.ddKeys[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// ddBinding is a binding of a restriction policy as the API answers it.
type ddBinding struct {
	Relation   string   `json:"relation"`
	Principals []string `json:"principals"`
}

// ddPolicy returns the bindings of the restriction policy of rid: none when
// it has no policy.
func (c clients) ddPolicy(t *testing.T, rid string) []ddBinding {
	t.Helper()
	var doc struct {
		Data struct {
			Attributes struct {
				Bindings []ddBinding `json:"bindings"`
			} `json:"attributes"`
		} `json:"data"`
	}
	c.dd(t, http.MethodGet, "/api/v2/restriction_policy/"+rid, "", http.StatusOK, &doc)
	return doc.Data.Attributes.Bindings
}

// setDDPolicy replaces the restriction policy of rid with bindings.
func (c clients) setDDPolicy(t *testing.T, rid string, bindings ...ddBinding) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"data": map[string]any{
		"id": rid, "type": "restriction_policy", "attributes": map[string]any{"bindings": bindings},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c.dd(t, http.MethodPost, "/api/v2/restriction_policy/"+rid, string(body), http.StatusOK, nil)
}

// ddUser is the current user as GET /api/v2/current_user answers it.
type ddUser struct {
	ID, Email, Handle, Name, OrgID string
}

func (c clients) currentUser(t *testing.T) ddUser {
	t.Helper()
	var doc struct {
		Data struct {
			ID         string `json:"id"`
			Attributes struct {
				Email  string `json:"email"`
				Handle string `json:"handle"`
				Name   string `json:"name"`
			} `json:"attributes"`
			Relationships struct {
				Org struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				} `json:"org"`
			} `json:"relationships"`
		} `json:"data"`
	}
	c.dd(t, http.MethodGet, "/api/v2/current_user", "", http.StatusOK, &doc)
	d := doc.Data
	return ddUser{ID: d.ID, Email: d.Attributes.Email, Handle: d.Attributes.Handle, Name: d.Attributes.Name, OrgID: d.Relationships.Org.Data.ID}
}

func TestSeedFileObjectsAreServed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startSeeded(t, dir, writeSeed(t, seedJSON))
	defer srv.Close()
	if srv.Seeded != (server.SeedReport{Added: seedObjects}) {
		t.Errorf("Seeded = %+v, want %d added", srv.Seeded, seedObjects)
	}
	c := newClients(t, srv, dir)
	ctx := t.Context()

	// OCI: the model is listed in the new compartment, as the real call
	// lists it; the project is there; the FAILED model sits in Seed's
	// project, in the tenancy.
	compartment := seedCompartment
	models, err := c.oci.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &compartment})
	if err != nil {
		t.Fatalf("ListModels(%s): %v", compartment, err)
	}
	if len(models.Items) != 1 || *models.Items[0].Id != seedModel || models.Items[0].LifecycleState != ailanguage.ModelLifecycleStateActive ||
		*models.Items[0].ProjectId != seedProject || *models.Items[0].DisplayName != "team-classifier" {
		t.Errorf("ListModels(%s) = %+v, want the ACTIVE seeded model", compartment, models.Items)
	} else if _, ok := models.Items[0].ModelDetails.(ailanguage.TextClassificationModelDetails); !ok {
		t.Errorf("seeded model details = %T, want TextClassificationModelDetails", models.Items[0].ModelDetails)
	}
	project, err := c.oci.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: common.String(seedProject)})
	if err != nil {
		t.Fatalf("GetProject: %v", err)
	}
	if *project.DisplayName != "team-project" || *project.CompartmentId != seedCompartment || project.LifecycleState != ailanguage.ProjectLifecycleStateActive ||
		*project.Description != "seeded" || project.FreeformTags["team"] != "a" {
		t.Errorf("GetProject = %+v", project.Project)
	}
	failed, err := c.oci.GetModel(ctx, ailanguage.GetModelRequest{ModelId: common.String(seedFailedModel)})
	if err != nil {
		t.Fatalf("GetModel: %v", err)
	}
	if failed.LifecycleState != ailanguage.ModelLifecycleStateFailed || *failed.LifecycleDetails != "no data" || *failed.CompartmentId != srv.Creds.OCITenancy {
		t.Errorf("GetModel(%s) = %+v, want FAILED in the tenancy", seedFailedModel, failed.Model)
	}
	if _, ok := failed.ModelDetails.(ailanguage.NamedEntityRecognitionModelDetails); !ok {
		t.Errorf("FAILED model details = %T, want NamedEntityRecognitionModelDetails", failed.ModelDetails)
	}

	// GCP: the service is listed with its producer and policy; consumer
	// policies on it and on the built-in service.
	list, err := c.gcp.Services.List().ProducerProjectId("acme-prod").Context(ctx).Do()
	if err != nil {
		t.Fatalf("services.list: %v", err)
	}
	if !slices.ContainsFunc(list.Services, func(s *servicemanagement.ManagedService) bool { return s.ServiceName == seedService }) {
		t.Errorf("services.list(acme-prod) lacks %s", seedService)
	}
	if p := c.servicePolicy(t, seedService); p != `{"bindings":[{"members":["user:a@acme.example"],"role":"roles/servicemanagement.serviceConsumer"}]}` {
		t.Errorf("policy of %s = %s", seedService, p)
	}
	if p := c.consumerPolicy(t, seedService, "acme-other"); !strings.Contains(p, "group:other@acme.example") {
		t.Errorf("consumer policy of acme-other on %s = %s", seedService, p)
	}
	if p := c.consumerPolicy(t, "orders.endpoints.acme-prod.cloud.goog", "acme-other"); !strings.Contains(p, "user:b@acme.example") {
		t.Errorf("consumer policy of acme-other on the built-in service = %s", p)
	}

	// Datadog: the current user and the policies.
	u := c.currentUser(t)
	if u.ID != seedUserID || u.Email != "dev@acme.example" || u.Handle != "dev@acme.example" || u.Name != "Acme Dev" || u.OrgID == "" {
		t.Errorf("current user = %+v, want the seeded one", u)
	}
	if b := c.ddPolicy(t, "dashboard:xyz"); len(b) != 1 || b[0].Relation != "viewer" {
		t.Errorf("policy of dashboard:xyz = %v", b)
	}
}

func TestSeedFileKeepsChangesAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := writeSeed(t, seedJSON)
	srv := startSeeded(t, dir, seed)
	c := newClients(t, srv, dir)
	ctx := t.Context()

	// Change what another user could: a service policy, a restriction
	// policy, and delete another restriction policy.
	_, err := c.gcp.Services.SetIamPolicy("services/"+seedService, &servicemanagement.SetIamPolicyRequest{
		Policy: &servicemanagement.Policy{Bindings: []*servicemanagement.Binding{
			{Role: "roles/servicemanagement.serviceConsumer", Members: []string{"user:carol@acme.example"}},
		}},
	}).Context(ctx).Do()
	if err != nil {
		t.Fatalf("setIamPolicy: %v", err)
	}
	c.setDDPolicy(t, "dashboard:xyz", ddBinding{Relation: "editor", Principals: []string{seedTeam}})
	c.dd(t, http.MethodDelete, "/api/v2/restriction_policy/notebook:42", "", http.StatusNoContent, nil)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	// The same seed again: every object is there already.
	srv = startSeeded(t, dir, seed)
	defer srv.Close()
	if srv.Seeded != (server.SeedReport{Kept: seedObjects}) {
		t.Errorf("Seeded on restart = %+v, want %d kept", srv.Seeded, seedObjects)
	}
	c = newClients(t, srv, dir)
	if p := c.servicePolicy(t, seedService); !strings.Contains(p, "user:carol@acme.example") || strings.Contains(p, "user:a@acme.example") {
		t.Errorf("policy of %s after a restart = %s, want the change kept", seedService, p)
	}
	if b := c.ddPolicy(t, "dashboard:xyz"); len(b) != 1 || b[0].Relation != "editor" {
		t.Errorf("policy of dashboard:xyz after a restart = %v, want the change kept", b)
	}
	if b := c.ddPolicy(t, "notebook:42"); len(b) != 0 {
		t.Errorf("policy of notebook:42 after a restart = %v, want it still deleted", b)
	}
	if u := c.currentUser(t); u.ID != seedUserID {
		t.Errorf("current user after a restart = %+v", u)
	}
}

func TestSeedFileUserOnlyForFreshData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startSeeded(t, dir, "")
	c := newClients(t, srv, dir)
	builtin := c.currentUser(t).ID
	srv.Close()
	srv = startSeeded(t, dir, writeSeed(t, `{"datadog": {"user": {"id": "`+seedUserID+`"}}}`))
	defer srv.Close()
	if srv.Seeded != (server.SeedReport{Kept: 1}) {
		t.Errorf("Seeded = %+v, want the user kept", srv.Seeded)
	}
	if got := newClients(t, srv, dir).currentUser(t).ID; got != builtin {
		t.Errorf("current user %v, want the one the data already had, %v", got, builtin)
	}
}

func TestSeedFileRefused(t *testing.T) {
	t.Parallel()
	model := func(fields string) string {
		return `{"oci": {"models": [{"id": "` + seedModel + `", "displayName": "m", "projectId": "` + seedBuiltinProj + `"` + fields + `}]}}`
	}
	for name, tc := range map[string]struct{ file, want string }{
		"unknown top-level key": {`{"aws": {}}`, `the top level: unknown key "aws"`},
		"unknown nested key":    {model(`, "stat": "ACTIVE"`), `oci.models[0]: unknown key "stat"`},
		"wrong type":            {model(`, "state": 3`), `oci.models[0].state: want a string, not the number 3`},
		"bad state":             {model(`, "state": "RUNNING"`), `oci.models[0] "` + seedModel + `": state "RUNNING" is not one of CREATING, ACTIVE`},
		"bad model type":        {model(`, "modelType": "LLM"`), `oci.models[0] "` + seedModel + `": modelType "LLM"`},
		"unknown project": {
			`{"oci": {"models": [{"id": "` + seedModel + `", "displayName": "m", "projectId": "ocid1.ailanguageproject.oc1.iad.nope"}]}}`,
			`oci.models[0] "` + seedModel + `": projectId "ocid1.ailanguageproject.oc1.iad.nope" is no project`,
		},
		"not an OCID": {`{"oci": {"compartments": [{"id": "team", "name": "team"}]}}`, `oci.compartments[0] "team": id must be an OCID`},
		"bad member": {
			`{"gcp": {"services": [{"name": "` + seedService + `", "producerProjectId": "acme-prod", "policy": {"bindings": [{"role": "roles/viewer", "members": ["bob"]}]}}]}}`,
			`gcp.services[0] "` + seedService + `": policy.bindings[0].members: The member bob is of an unknown type. Please set a valid type prefix for the member.`,
		},
		"consumer of an unknown service": {
			`{"gcp": {"consumerPolicies": [{"service": "nope.endpoints.acme-prod.cloud.goog", "consumer": "acme-other"}]}}`,
			`gcp.consumerPolicies[0] "nope.endpoints.acme-prod.cloud.goog/acme-other": service`,
		},
		"bad relation": {
			`{"datadog": {"policies": [{"resourceId": "dashboard:x", "bindings": [{"relation": "owner", "principals": []}]}]}}`,
			`datadog.policies[0] "dashboard:x": bindings[0]: Invalid relation: 'owner'`,
		},
		"bad principal": {
			`{"datadog": {"policies": [{"resourceId": "dashboard:x", "bindings": [{"relation": "viewer", "principals": ["user:bob"]}]}]}}`,
			`datadog.policies[0] "dashboard:x": bindings[0]: Invalid principal: 'user:bob'`,
		},
		"bad user id":  {`{"datadog": {"user": {"id": "7"}}}`, `datadog.user: id "7" is not a UUID`},
		"syntax error": {"{\n  \"oci\": {,}\n}", `not valid JSON: line 2, column 11`},
		"not a file":   {"", "seed file"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "missing.json")
			if tc.file != "" {
				path = writeSeed(t, tc.file)
			}
			dir := filepath.Join(t.TempDir(), "data")
			srv, err := server.Start(server.Options{DataDir: dir, SeedFile: path})
			if err == nil {
				srv.Close()
				t.Fatalf("Start succeeded, want a refusal")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant one naming %s and %q", err, path, tc.want)
			}
		})
	}
}

// A file refused for a later entry writes none of the earlier ones.
func TestSeedFileAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := strings.Replace(seedJSON, `"principals": ["`+seedTeam+`"]`, `"principals": ["team:x"]`, 1)
	if _, err := server.Start(server.Options{DataDir: dir, SeedFile: writeSeed(t, bad)}); err == nil || !strings.Contains(err.Error(), `datadog.policies[1] "notebook:42"`) {
		t.Fatalf("Start with a bad last entry: %v, want it refused naming datadog.policies[1]", err)
	}
	srv := startSeeded(t, dir, "")
	defer srv.Close()
	c := newClients(t, srv, dir)
	_, err := c.oci.GetModel(t.Context(), ailanguage.GetModelRequest{ModelId: common.String(seedModel)})
	if se, ok := common.IsServiceError(err); !ok || se.GetHTTPStatusCode() != http.StatusNotFound {
		t.Errorf("GetModel of a model of the refused file: %v, want 404", err)
	}
	if b := c.ddPolicy(t, "dashboard:xyz"); len(b) != 0 {
		t.Errorf("policy of dashboard:xyz from the refused file = %v, want none", b)
	}
}
