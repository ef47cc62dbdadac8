package main

// End-to-end tests of drift, refresh, import and get: the real binary on the
// emulator (see e2e_test.go), with changes made outside reconcile through the
// real APIs, as another user would make them: the official OCI SDK for
// endpoints, the Datadog and GCP HTTP APIs for policies.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// ociClient is an OCI AI Language client of the official SDK pointed at the
// emulator, signing with its key: another user of the tenancy.
func (e *emu) ociClient(dir string) ailanguage.AIServiceLanguageClient {
	e.t.Helper()
	cfgDir := filepath.Join(dir, "oci-client")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	key := filepath.Join(cfgDir, "key.pem")
	cfg := filepath.Join(cfgDir, "config")
	if err := os.WriteFile(key, []byte(e.srv.Creds.OCIPrivateKey), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(server.OCIConfig(e.srv.Creds, key)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(common.CustomProfileConfigProvider(cfg, "DEFAULT"))
	if err != nil {
		e.t.Fatal(err)
	}
	c.Host = e.srv.URL
	return c
}

// createEndpoint creates an endpoint outside reconcile and returns its id
// once it is ACTIVE.
func (e *emu) createEndpoint(c ailanguage.AIServiceLanguageClient, model, name string) string {
	e.t.Helper()
	comp := server.Tenancy
	resp, err := c.CreateEndpoint(context.Background(), ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
		CompartmentId: &comp, ModelId: &model, DisplayName: &name, InferenceUnits: common.Int(2),
		FreeformTags: map[string]string{"made": "by-hand"},
	}})
	if err != nil {
		e.t.Fatalf("OCI create endpoint: %v", err)
	}
	e.waitActive(c, *resp.Id)
	return *resp.Id
}

// waitActive reads the endpoint until it is ACTIVE (the emulator settles it
// on the first read when no delay is set).
func (e *emu) waitActive(c ailanguage.AIServiceLanguageClient, id string) ailanguage.Endpoint {
	e.t.Helper()
	for range 50 {
		resp, err := c.GetEndpoint(context.Background(), ailanguage.GetEndpointRequest{EndpointId: &id})
		if err != nil {
			e.t.Fatalf("OCI get endpoint %s: %v", id, err)
		}
		if resp.LifecycleState == ailanguage.EndpointLifecycleStateActive {
			return resp.Endpoint
		}
	}
	e.t.Fatalf("endpoint %s did not become ACTIVE", id)
	return ailanguage.Endpoint{}
}

// setPolicy replaces the restriction policy of rid through the Datadog
// API, as another admin would: the emulator has one user, reconcile's, so
// the write passes allow_self_lockout=true, bindings without that user
// being someone else's business.
func (e *emu) setPolicy(rid string, bindings []binding) {
	e.t.Helper()
	body := map[string]any{"data": map[string]any{"id": rid, "type": "restriction_policy", "attributes": map[string]any{"bindings": bindings}}}
	e.do("POST", "/api/v2/restriction_policy/"+url.PathEscape(rid)+"?allow_self_lockout=true", body, e.ddHeaders(), nil)
}

// setServicePolicy sets the IAM policy of a GCP managed service.
func (e *emu) setServicePolicy(service string, bindings []map[string]any) {
	e.t.Helper()
	e.do("POST", "/v1/services/"+service+":setIamPolicy", map[string]any{"policy": map[string]any{"bindings": bindings}},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, nil)
}

// endpointSpec declares one endpoint named name in the emulator's tenancy.
func endpointSpec(name, model, displayName, more string) string {
	return fmt.Sprintf(`  %s:
    type: oci:AiLanguage:Endpoint
    properties:
      compartmentId: %s
      modelId: %s
      displayName: %s
%s`, name, server.Tenancy, model, displayName, more)
}

// driftDoc is the JSON of 'reconcile drift --output json' (docs/drift-json.md).
type driftDoc struct {
	FormatVersion string `json:"format_version"`
	Lineage       string `json:"lineage"`
	Serial        int64  `json:"serial"`
	Checked       int    `json:"checked"`
	Drifted       int    `json:"drifted"`
	HasDrift      bool   `json:"has_drift"`
	Items         []struct {
		Address string `json:"address"`
		Type    string `json:"type"`
		Kind    string `json:"kind"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Fields  []struct {
			Path      string `json:"path"`
			Applied   any    `json:"applied"`
			Live      any    `json:"live"`
			Sensitive bool   `json:"sensitive"`
		} `json:"fields"`
		Details       []string `json:"details"`
		AccessChanges []struct {
			Resource, Role, Condition, Member, Change string
		} `json:"access_changes"`
	} `json:"items"`
	Errors []struct {
		Address string `json:"address"`
		Error   string `json:"error"`
	} `json:"errors"`
	Summary string `json:"summary"`
}

// driftJSON runs 'drift --output json', checks the exit code and decodes.
func (w *ws) driftJSON(want int) driftDoc {
	w.t.Helper()
	r := w.must(want, "drift", "--output", "json")
	var d driftDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		w.t.Fatalf("drift --output json does not parse: %v\n%s", err, r)
	}
	if d.FormatVersion != "1.2" || d.HasDrift != (d.Drifted > 0) || d.Drifted != len(d.Items) || d.Items == nil || d.Errors == nil || d.Summary == "" {
		w.t.Errorf("drift json is not as documented: %+v", d)
	}
	for _, it := range d.Items {
		if it.AccessChanges == nil {
			w.t.Errorf("drift json item %s has no access_changes list: %+v", it.Address, it)
		}
	}
	return d
}

// copyExamples copies testdata/examples into the working directory.
func (w *ws) copyExamples() {
	w.t.Helper()
	dir := filepath.Join("..", "..", "testdata", "examples")
	ents, err := os.ReadDir(dir)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			w.t.Fatal(err)
		}
		w.write(e.Name(), string(b))
	}
}

// TestE2EDriftNoneAfterApplyExamples applies every example spec (all four
// kinds of the interface, plus the current-user lookup, an IAM policy built
// by getIAMPolicy and an IAM member) and checks that neither drift nor a
// refreshing plan reports anything: the cloud's own normalisation
// (defaults, tag maps, set-like bindings, output-only fields, the
// Oracle-Tags tag defaults OCI adds on create, IAM etags) is never drift.
func TestE2EDriftNoneAfterApplyExamples(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	w.copyExamples()
	w.must(0, "apply", "--auto-approve")

	id := w.stateList()["sentiment"].ID
	tags := e.waitActive(e.ociClient(t.TempDir()), id).DefinedTags
	if tags["Oracle-Tags"]["CreatedBy"] != e.srv.Creds.OCIUser {
		t.Errorf("the emulator did not add the Oracle-Tags tag defaults on create: definedTags %v", tags)
	}

	r := w.must(0, "drift")
	wantStdout(t, r, "No drift: 12 resources and lookups match what was last applied.")
	if d := w.driftJSON(0); d.HasDrift || d.Checked != 12 || len(d.Errors) != 0 {
		t.Errorf("drift json right after apply: %+v", d)
	}
	r = w.must(0, "drift", "--output", "markdown")
	wantStdout(t, r, "No drift")
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes. The cloud matches the specs.")
	if strings.Contains(r.stdout, "outside reconcile") {
		t.Errorf("plan right after apply shows drift:\n%s", r)
	}
	r = w.must(0, "plan", "--refresh-only", "--detailed-exitcode")
	wantStdout(t, r, "No changes. State matches the cloud")
}

// TestE2EDriftEndpointUpdate changes an endpoint with the OCI SDK and
// follows the drift through: drift reports it, plan shows it apart and the
// update back, apply --refresh-only accepts it, then apply undoes it.
func TestE2EDriftEndpointUpdate(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, "drift-ep", "      inferenceUnits: 2\n      freeformTags:\n        team: nlp\n")+
		endpointSpec("ignored", model, "ignored-ep", "      description: as applied\n    options:\n      ignoreChanges: [description]\n"))
	w.must(0, "apply", "--auto-approve")
	st := w.stateList()
	c := e.ociClient(t.TempDir())

	// Someone renames ep, scales it and adds a tag; someone edits the
	// description reconcile is told to ignore.
	epID, ignoredID := st["ep"].ID, st["ignored"].ID
	if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &epID, UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{
		DisplayName: common.String("renamed-by-hand"), InferenceUnits: common.Int(3), FreeformTags: map[string]string{"team": "nlp", "owner": "bob"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &ignoredID, UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{
		Description: common.String("edited by hand"),
	}}); err != nil {
		t.Fatal(err)
	}
	e.waitActive(c, epID)
	e.waitActive(c, ignoredID)

	mark := e.mark()
	r := w.must(2, "drift")
	wantStdout(t, r, "# ep (oci:AiLanguage:Endpoint) was changed outside reconcile",
		`~ displayName    = "drift-ep" -> "renamed-by-hand"`, `~ inferenceUnits = 2 -> 3`, "freeformTags",
		"Drift: 1 changed, 0 deleted, 0 with new lookup results (2 checked).")
	if strings.Contains(r.stdout, "ignored") {
		t.Errorf("drift reports the ignoreChanges field:\n%s", r)
	}
	if calls := e.callsSince(mark, "/20221001/"); countMethod(calls, "PUT")+countMethod(calls, "POST")+countMethod(calls, "DELETE") != 0 {
		t.Errorf("drift changed the cloud: %v", calls)
	}
	d := w.driftJSON(2)
	if len(d.Items) != 1 || d.Items[0].Address != "ep" || d.Items[0].Status != "changed" || len(d.Items[0].Fields) != 3 {
		t.Fatalf("drift json items = %+v, want ep with 3 fields", d.Items)
	}
	if f := d.Items[0].Fields[0]; f.Path != "displayName" || f.Applied != "drift-ep" || f.Live != "renamed-by-hand" || f.Sensitive {
		t.Errorf("drift json field = %+v", f)
	}
	r = w.must(2, "drift", "--output", "markdown")
	wantStdout(t, r, ":warning: Drift detected", "<code>ep</code>", "<code>displayName</code>")

	// The plan shows the drift apart, then the update back to the specs.
	r = w.must(2, "plan", "--detailed-exitcode")
	section, changes, ok := strings.Cut(r.stdout, "reconcile will take these actions")
	if !ok {
		t.Fatalf("plan has no changes:\n%s", r)
	}
	wantStdout(t, result{stdout: section}, "Objects changed outside reconcile since the last apply:",
		`~ displayName    = "drift-ep" -> "renamed-by-hand"`, `~ inferenceUnits = 2 -> 3`, `+ owner = "bob"`, "reconcile apply --refresh-only")
	wantStdout(t, result{stdout: changes}, "~ ep", `~ displayName    = "renamed-by-hand" -> "drift-ep"`, "1 to update")
	if strings.Contains(r.stdout, "ignored") {
		t.Errorf("plan mentions the ignored change:\n%s", r)
	}
	r = w.must(0, "plan", "--output", "json")
	var pl struct {
		FormatVersion string `json:"format_version"`
		ResourceDrift []struct {
			Address string `json:"address"`
			Status  string `json:"status"`
		} `json:"resource_drift"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pl); err != nil {
		t.Fatal(err)
	}
	if pl.FormatVersion != render.PlanJSONVersion || len(pl.ResourceDrift) != 1 || pl.ResourceDrift[0].Address != "ep" {
		t.Errorf("plan json: format %q, resource_drift %+v", pl.FormatVersion, pl.ResourceDrift)
	}
	r = w.must(0, "plan", "--output", "markdown")
	wantStdout(t, r, "1 object changed outside reconcile since the last apply")

	// Accept the drift into state: the cloud is not touched.
	r = w.must(2, "plan", "--refresh-only", "--detailed-exitcode", "--out", "refresh.plan")
	wantStdout(t, r, "accept the cloud's values into state", `~ displayName    = "drift-ep" -> "renamed-by-hand"`, "Plan: 1 to accept into state")
	mark = e.mark()
	r = w.must(0, "apply", "refresh.plan")
	wantStdout(t, r, "Apply complete! 1 accepted into state from the cloud; nothing in the cloud was changed.")
	if calls := e.callsSince(mark, "/20221001/"); len(calls) != 0 {
		t.Errorf("apply of a refresh-only plan called the cloud: %v", calls)
	}
	if n := w.stateShow("ep"); n.Inputs["displayName"] != "renamed-by-hand" {
		t.Errorf("state after the refresh: inputs %v", n.Inputs)
	}
	r = w.must(0, "state", "history")
	wantStdout(t, r, "apply --refresh-only")
	w.must(0, "drift")

	// The plan now shows the way back to the specs, and no drift.
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, `~ displayName    = "renamed-by-hand" -> "drift-ep"`, "1 to update")
	if strings.Contains(r.stdout, "outside reconcile") {
		t.Errorf("plan after apply --refresh-only still shows drift:\n%s", r)
	}
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "1 updated")
	ep := e.waitActive(c, epID)
	if *ep.DisplayName != "drift-ep" || *ep.InferenceUnits != 2 || ep.FreeformTags["owner"] != "" || ep.DefinedTags["Oracle-Tags"]["CreatedBy"] == nil {
		t.Errorf("endpoint after apply: %s units %d tags %v defined %v", *ep.DisplayName, *ep.InferenceUnits, ep.FreeformTags, ep.DefinedTags)
	}
	w.must(0, "drift")
	w.must(0, "plan", "--detailed-exitcode")
}

// TestE2EDriftDeleted deletes an endpoint with the OCI SDK and a
// restriction policy with the Datadog API.
func TestE2EDriftDeleted(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	pid := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", pid, "", ""), endpointSpec("ep", model, "doomed", "")))
	w.must(0, "apply", "--auto-approve")
	epID := w.stateList()["ep"].ID
	c := e.ociClient(t.TempDir())
	if _, err := c.DeleteEndpoint(context.Background(), ailanguage.DeleteEndpointRequest{EndpointId: &epID}); err != nil {
		t.Fatal(err)
	}
	e.do("DELETE", "/api/v2/restriction_policy/"+url.PathEscape(pid), nil, e.ddHeaders(), nil)

	r := w.must(2, "drift")
	// Datadog answers a policy that is gone as one without bindings: no
	// policy, deleted outside reconcile.
	wantStdout(t, r, "# ep (oci:AiLanguage:Endpoint) was deleted outside reconcile", "# pol (datadog:RestrictionPolicy) was deleted outside reconcile",
		"Drift: 0 changed, 2 deleted, 0 with new lookup results")
	d := w.driftJSON(2)
	status := map[string]string{}
	for _, it := range d.Items {
		status[it.Address] = it.Status
		if it.Address == "ep" && it.ID != epID {
			t.Errorf("deleted ep item id = %q, want %q", it.ID, epID)
		}
	}
	if status["ep"] != "deleted" || status["pol"] != "deleted" {
		t.Errorf("drift json statuses = %v", status)
	}

	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "# ep (oci:AiLanguage:Endpoint) was deleted outside reconcile", "will be created", "(the object was deleted outside reconcile)", "2 to create, 0 to update")
	r = w.must(0, "apply", "--refresh-only", "--auto-approve")
	wantStdout(t, r, "2 accepted into state")
	if _, ok := w.stateList()["ep"]; ok {
		t.Errorf("ep, deleted outside reconcile, is still in state after apply --refresh-only")
	}
	w.must(0, "drift")
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "2 created", "0 updated")
	if len(e.policy(pid)) != 1 {
		t.Errorf("the policy was not written back")
	}
	w.must(0, "drift")
}

// TestE2EDriftPolicies changes a Datadog restriction policy and a GCP
// service's IAM policy outside reconcile.
func TestE2EDriftPolicies(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	pid := rid(t, "")
	extra := fmt.Sprintf("        - relation: viewer\n          principals: [%q, %q]\n", role1, role2)
	w.write("main.yaml", spec(policySpec("pol", pid, extra, "")))
	w.must(0, "apply", "--auto-approve")
	org := e.orgID()

	// The same bindings in another order are no drift.
	e.setPolicy(pid, []binding{{Relation: "viewer", Principals: []string{role2, role1}}, {Relation: "editor", Principals: []string{"org:" + org}}})
	w.must(0, "drift")
	// A principal removed is.
	e.setPolicy(pid, []binding{{Relation: "viewer", Principals: []string{role2}}, {Relation: "editor", Principals: []string{"org:" + org}}})
	// A member added to and one removed from the service's IAM policy.
	svc := "orders.endpoints.acme-prod.cloud.goog"
	e.setServicePolicy(svc, []map[string]any{
		{"role": "roles/servicemanagement.serviceConsumer", "members": []string{"group:orders-clients@acme.example", "user:mallory@evil.example"}},
		{"role": "roles/servicemanagement.serviceController", "members": []string{"serviceAccount:orders-esp@acme-prod.iam.gserviceaccount.com"}},
	})

	r := w.must(2, "drift")
	memberLines := []string{
		"# access to services/" + svc + ": removed (-) and added (+) outside reconcile since the last apply",
		"- roles/servicemanagement.serviceConsumer  user:alice@acme.example",
		"+ roles/servicemanagement.serviceConsumer  user:mallory@evil.example",
	}
	wantStdout(t, r, append(memberLines, "# pol (datadog:RestrictionPolicy) was changed outside reconcile", "bindings",
		"# svcPolicy (gcp:endpoints:getServiceIamPolicy) returns a new result", "etag",
		"Drift: 1 changed, 0 deleted, 1 with new lookup results (3 checked).")...)
	d := w.driftJSON(2)
	var svcItem, polItem bool
	for _, it := range d.Items {
		switch it.Address {
		case "svcPolicy":
			svcItem = it.Status == "result" && it.Kind == "lookup" && len(it.Details) == 1 && strings.Contains(it.Details[0], "+user:mallory@evil.example") &&
				len(it.AccessChanges) == 2 && it.AccessChanges[0].Member == "user:alice@acme.example" && it.AccessChanges[0].Change == "removed" &&
				it.AccessChanges[1].Member == "user:mallory@evil.example" && it.AccessChanges[1].Change == "added" && it.AccessChanges[1].Resource == "services/"+svc
			if len(it.Fields) != 2 || it.Fields[0].Path != "etag" || it.Fields[1].Path != "policyData" {
				t.Errorf("svcPolicy fields = %+v, want etag and policyData", it.Fields)
			}
		case "pol":
			polItem = it.Status == "changed" && len(it.Fields) == 1 && it.Fields[0].Path == "bindings"
		}
	}
	if !svcItem || !polItem {
		t.Errorf("drift json items = %+v", d.Items)
	}

	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, append(memberLines, "Objects changed outside reconcile", "~ pol", "1 to update")...)
	r = w.must(0, "apply", "--refresh-only", "--auto-approve")
	wantStdout(t, r, "2 accepted into state")
	w.must(0, "drift")
	if n := w.stateShow("svcPolicy"); n.Outputs["etag"] != e.serviceEtag(svc) {
		t.Errorf("svcPolicy etag in state = %v, want the live one", n.Outputs["etag"])
	}
	w.must(2, "plan", "--detailed-exitcode")
	w.must(0, "apply", "--auto-approve")
	w.must(0, "drift")
}

// TestE2EDriftCron is what a cron job does: drift --output json, forward
// when the exit code is 2, and treat 1 as an error to report too.
func TestE2EDriftCron(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	pid := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", pid, "", "")))
	w.must(0, "apply", "--auto-approve")

	d := w.driftJSON(0)
	if d.HasDrift || d.Drifted != 0 || len(d.Items) != 0 || d.Checked != 3 || d.Lineage == "" || d.Serial == 0 ||
		d.Summary != "No drift: 3 resources and lookups match what was last applied." {
		t.Errorf("cron run without drift: %+v", d)
	}

	e.setPolicy(pid, []binding{{Relation: "editor", Principals: []string{"org:" + e.orgID()}}, {Relation: "viewer", Principals: []string{role1}}})
	d = w.driftJSON(2)
	if !d.HasDrift || d.Drifted != 1 || d.Summary != "Drift: 1 changed, 0 deleted, 0 with new lookup results (3 checked)." {
		t.Fatalf("cron run after a change: %+v", d)
	}
	it := d.Items[0]
	if it.Address != "pol" || it.Type != "datadog:RestrictionPolicy" || it.Kind != "resource" || it.ID != pid || it.Status != "changed" || len(it.Fields) != 1 {
		t.Fatalf("item = %+v", it)
	}
	f := it.Fields[0]
	applied, _ := f.Applied.([]any)
	live, _ := f.Live.([]any)
	if f.Path != "bindings" || len(applied) != 1 || len(live) != 2 || f.Sensitive {
		t.Errorf("field = %+v, want bindings from 1 to 2", f)
	}

	// A node that cannot be read: exit 1, with the error in the report.
	e.settings(server.Settings{FaultRate: 1, FaultStatuses: []int{403}})
	d = w.driftJSON(1)
	e.settings(server.Settings{})
	if len(d.Errors) == 0 {
		t.Errorf("cron run with the API refusing: errors %+v, want some", d.Errors)
	}
}

// TestE2EImportOutOfBand adopts endpoints created with the OCI SDK: with
// 'reconcile import', pasting the YAML it prints; and with options.import,
// updating the object to the specs.
func TestE2EImportOutOfBand(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	c := e.ociClient(t.TempDir())
	handID := e.createEndpoint(c, model, "made-by-hand")
	adoptID := e.createEndpoint(c, model, "to-adopt")
	w.write("main.yaml", lookupsSpec)
	// import starts the state of a new project, as plan and apply do.
	r := w.must(0, "import", "handMade", handID, "--type", "oci:AiLanguage:Endpoint")
	wantStderr(t, r, "Imported "+handID, "Add this to your specs")
	wantStdout(t, r, "resources:\n  handMade:\n    type: oci:AiLanguage:Endpoint\n", "displayName: made-by-hand", "inferenceUnits: 2", "made: by-hand")
	if strings.Contains(r.stdout, "Oracle-Tags") || strings.Contains(r.stdout, "state:") {
		t.Errorf("the declaration holds what the cloud sets by itself:\n%s", r.stdout)
	}
	w.write("imported.yaml", r.stdout)
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
	w.must(0, "drift")
	w.must(1, "import", "handMade", handID, "--type", "oci:AiLanguage:Endpoint") // already in state

	// options.import: adopted on apply, then updated to the specs.
	w.write("adopt.yaml", "resources:\n"+endpointSpec("adopted", model, "adopted-now", fmt.Sprintf("      inferenceUnits: 2\n      freeformTags:\n        made: by-hand\n    options:\n      import: %s\n", adoptID)))
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "will be imported from id \""+adoptID+"\"", `then updated in place: "displayName"`, "1 to import")
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "1 imported")
	if ep := e.waitActive(c, adoptID); *ep.DisplayName != "adopted-now" {
		t.Errorf("adopted endpoint displayName = %q, want adopted-now", *ep.DisplayName)
	}
	if n := w.stateList()["adopted"]; n.ID != adoptID {
		t.Errorf("state: adopted = %+v", n)
	}
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
	w.must(0, "drift")
}

// TestE2EGetState reads an endpoint made outside reconcile with get: its
// outputs can be referenced, a matching state entry passes, a mismatching
// one is an error naming the field and both values.
func TestE2EGetState(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	c := e.ociClient(t.TempDir())
	id := e.createEndpoint(c, model, "legacy-endpoint")
	getSpec := func(state string) string {
		return fmt.Sprintf(`resources:
  legacy:
    type: oci:AiLanguage:Endpoint
    get:
      id: %s
      state:
        %s
outputs:
  legacyName: ${legacy.displayName}
  legacyUnits: ${legacy.inference_units}
`, id, state)
	}
	w.write("main.yaml", getSpec("display_name: legacy-endpoint"))
	r := w.must(0, "plan")
	wantStdout(t, r, "legacy", "will be read")
	r = w.must(0, "apply", "--auto-approve")
	wantOutput(t, r, "legacyName", "legacy-endpoint")
	w.must(0, "drift")

	w.write("main.yaml", getSpec("displayName: someone-else"))
	r = w.must(1, "plan")
	wantStderr(t, r, "main.yaml:7:9: error:", `get "legacy": state field "displayName" is "someone-else" in the specs but "legacy-endpoint" in the cloud`)
	w.write("main.yaml", getSpec("inferenceUnits: 3"))
	r = w.must(1, "plan")
	wantStderr(t, r, `state field "inferenceUnits" is 3 in the specs but 2 in the cloud`)

	// The object read with get changes: drift says so.
	if _, err := c.UpdateEndpoint(context.Background(), ailanguage.UpdateEndpointRequest{EndpointId: &id,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: common.String("renamed")}}); err != nil {
		t.Fatal(err)
	}
	e.waitActive(c, id)
	w.write("main.yaml", getSpec("inferenceUnits: 2"))
	r = w.must(2, "drift")
	wantStdout(t, r, "# legacy (oci:AiLanguage:Endpoint) changed since it was last read", `~ displayName = "legacy-endpoint" -> "renamed"`)
}
