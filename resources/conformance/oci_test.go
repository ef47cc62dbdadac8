//go:build conformance

package conformance_test

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// otherCompartment is the second compartment the emulator seeds (see
// aiendpoint.Emulator.Seed); OCI has no compartment call in the AI Language
// API to discover it with.
const otherCompartment = "ocid1.compartment.oc1..aaaaaaaaemulatorother"

// ociClient is the official AI Language client configured from the config
// file the emulator wrote, pointed at the emulator.
func ociClient(t *testing.T, srv *server.Server, configFile string) ailanguage.AIServiceLanguageClient {
	t.Helper()
	p, err := common.ConfigurationProviderFromFile(configFile, "")
	if err != nil {
		t.Fatalf("OCI config %s: %v", configFile, err)
	}
	c, err := ailanguage.NewAIServiceLanguageClientWithConfigurationProvider(p)
	if err != nil {
		t.Fatalf("OCI client: %v", err)
	}
	c.Host = srv.URL
	return c
}

// wantOCIError checks that err is an OCI service error with status and code.
func wantOCIError(t *testing.T, what string, err error, status int, code string) common.ServiceError {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: succeeded, want %d %s", what, status, code)
	}
	se, ok := common.IsServiceError(err)
	if !ok {
		t.Fatalf("%s: error is not an OCI ServiceError: %v", what, err)
	}
	if se.GetHTTPStatusCode() != status || se.GetCode() != code {
		t.Fatalf("%s: got %d %s (%s), want %d %s", what, se.GetHTTPStatusCode(), se.GetCode(), se.GetMessage(), status, code)
	}
	if se.GetOpcRequestID() == "" {
		t.Errorf("%s: error carries no opc-request-id", what)
	}
	return se
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestOCIEndpointLifecycle(t *testing.T) {
	srv, dir := startEmulator(t)
	// Make the asynchronous lifecycle observable.
	srv.Apply(server.Settings{CreateDelayMS: 300, UpdateDelayMS: 300, DeleteDelayMS: 300})
	ctx := testContext(t)
	c := ociClient(t, srv, filepath.Join(dir, "credentials", "oci_config"))
	root := srv.Creds.OCITenancy

	// The tenancy is the root compartment and holds an ACTIVE trained model.
	models, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &root})
	if err != nil {
		t.Fatalf("ListModels: %v", err)
	}
	var model ailanguage.ModelSummary
	for _, m := range models.Items {
		if m.LifecycleState == ailanguage.ModelLifecycleStateActive {
			model = m
			break
		}
	}
	if model.Id == nil {
		t.Fatalf("ListModels(%s): no ACTIVE model among %d", root, len(models.Items))
	}
	if str(model.ProjectId) == "" || model.ModelDetails == nil {
		t.Errorf("ACTIVE model %s: projectId %q, modelDetails %v", *model.Id, str(model.ProjectId), model.ModelDetails)
	}
	// Paging with limit and opc-next-page visits every model once.
	var paged []string
	for page := (*string)(nil); ; {
		resp, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &root, Limit: common.Int(1), Page: page})
		if err != nil {
			t.Fatalf("ListModels(limit=1): %v", err)
		}
		if len(resp.Items) > 1 {
			t.Fatalf("ListModels(limit=1): %d items", len(resp.Items))
		}
		for _, m := range resp.Items {
			paged = append(paged, str(m.Id))
		}
		if resp.OpcNextPage == nil {
			break
		}
		page = resp.OpcNextPage
	}
	if len(paged) != len(models.Items) || !slices.Contains(paged, *model.Id) {
		t.Errorf("ListModels page by page: %v, want the %d models of one page", paged, len(models.Items))
	}

	// Create, with an explicit retry token.
	// A name whose query encoding needs escapes: the signature covers the
	// request target as sent.
	name := "conformance endpoint ü/+&"
	units := 1
	create := ailanguage.CreateEndpointRequest{
		CreateEndpointDetails: ailanguage.CreateEndpointDetails{
			CompartmentId: &root, ModelId: model.Id, DisplayName: &name,
			Description: common.String("made by the conformance test"), InferenceUnits: &units,
			FreeformTags: map[string]string{"suite": "conformance"},
		},
		OpcRetryToken: common.String("conformance-create-token-0001"),
	}
	created, err := c.CreateEndpoint(ctx, create)
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	id := str(created.Id)
	createWR := str(created.OpcWorkRequestId)
	switch {
	case id == "" || !strings.HasPrefix(id, "ocid1.ailanguageendpoint."):
		t.Fatalf("CreateEndpoint: id %q", id)
	case created.LifecycleState != ailanguage.EndpointLifecycleStateCreating:
		t.Errorf("CreateEndpoint: state %s, want CREATING", created.LifecycleState)
	case createWR == "":
		t.Errorf("CreateEndpoint: no opc-work-request-id")
	case str(created.Etag) == "":
		t.Errorf("CreateEndpoint: no etag")
	case !strings.HasSuffix(str(created.Location), "/20221001/endpoints/"+id):
		t.Errorf("CreateEndpoint: location %q", str(created.Location))
	case str(created.ProjectId) != str(model.ProjectId):
		t.Errorf("CreateEndpoint: projectId %q, want the model's %q", str(created.ProjectId), str(model.ProjectId))
	case str(created.CompartmentId) != root || str(created.DisplayName) != name || created.TimeCreated == nil:
		t.Errorf("CreateEndpoint: got %+v", created.Endpoint)
	}

	// The same retry token replays the original answer.
	replayed, err := c.CreateEndpoint(ctx, create)
	if err != nil {
		t.Fatalf("CreateEndpoint replay: %v", err)
	}
	if str(replayed.Id) != id || str(replayed.OpcWorkRequestId) != createWR {
		t.Errorf("CreateEndpoint replay: endpoint %q work request %q, want %q %q", str(replayed.Id), str(replayed.OpcWorkRequestId), id, createWR)
	}
	list, err := c.ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: &root, DisplayName: &name})
	if err != nil {
		t.Fatalf("ListEndpoints: %v", err)
	}
	if len(list.Items) != 1 || str(list.Items[0].Id) != id {
		t.Fatalf("ListEndpoints after the replay: %d items, want only %s", len(list.Items), id)
	}

	// The create's work request reaches SUCCEEDED and names the endpoint.
	waitWorkRequest(t, c, createWR, ailanguage.OperationTypeCreateEndpoint, ailanguage.ActionTypeCreated, id)
	wrs, err := c.ListWorkRequests(ctx, ailanguage.ListWorkRequestsRequest{CompartmentId: &root})
	if err != nil {
		t.Fatalf("ListWorkRequests: %v", err)
	}
	if !slices.ContainsFunc(wrs.Items, func(w ailanguage.WorkRequestSummary) bool { return str(w.Id) == createWR }) {
		t.Errorf("ListWorkRequests(%s): %d items, none is %s", root, len(wrs.Items), createWR)
	}
	wrs, err = c.ListWorkRequests(ctx, ailanguage.ListWorkRequestsRequest{CompartmentId: &root, ResourceId: &id})
	if err != nil {
		t.Fatalf("ListWorkRequests(resourceId): %v", err)
	}
	if len(wrs.Items) != 1 || str(wrs.Items[0].Id) != createWR || wrs.Items[0].Status != ailanguage.OperationStatusSucceeded {
		t.Errorf("ListWorkRequests(resourceId=%s): %+v, want only the SUCCEEDED %s", id, wrs.Items, createWR)
	}

	// Get and list.
	got, err := c.GetEndpoint(ctx, ailanguage.GetEndpointRequest{EndpointId: &id})
	if err != nil {
		t.Fatalf("GetEndpoint: %v", err)
	}
	if got.LifecycleState != ailanguage.EndpointLifecycleStateActive || str(got.ModelId) != *model.Id || got.InferenceUnits == nil || *got.InferenceUnits != 1 ||
		got.FreeformTags["suite"] != "conformance" || got.TimeUpdated == nil {
		t.Errorf("GetEndpoint: %+v", got.Endpoint)
	}
	etag := str(got.Etag)
	if etag == "" {
		t.Fatalf("GetEndpoint: no etag")
	}
	all, err := c.ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: &root})
	if err != nil {
		t.Fatalf("ListEndpoints: %v", err)
	}
	if !slices.ContainsFunc(all.Items, func(e ailanguage.EndpointSummary) bool {
		return str(e.Id) == id && e.LifecycleState == ailanguage.EndpointLifecycleStateActive
	}) {
		t.Errorf("ListEndpoints(%s): %d items, none is the ACTIVE %s", root, len(all.Items), id)
	}

	// Update with the current etag.
	newName, newUnits := "conformance-endpoint-renamed", 2
	upd, err := c.UpdateEndpoint(ctx, ailanguage.UpdateEndpointRequest{
		EndpointId: &id, IfMatch: &etag,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: &newName, InferenceUnits: &newUnits},
	})
	if err != nil {
		t.Fatalf("UpdateEndpoint: %v", err)
	}
	if str(upd.OpcWorkRequestId) == "" {
		t.Errorf("UpdateEndpoint: no opc-work-request-id")
	}
	waitWorkRequest(t, c, str(upd.OpcWorkRequestId), ailanguage.OperationTypeUpdateEndpoint, ailanguage.ActionTypeUpdated, id)
	got = waitEndpoint(t, c, id, func(e ailanguage.Endpoint) error {
		if e.LifecycleState != ailanguage.EndpointLifecycleStateActive || str(e.DisplayName) != newName || e.InferenceUnits == nil || *e.InferenceUnits != newUnits {
			return errorf("state %s, name %q", e.LifecycleState, str(e.DisplayName))
		}
		return nil
	})
	if str(got.Etag) == etag {
		t.Errorf("the etag did not change with the update: %s", etag)
	}

	// A stale if-match is refused.
	_, err = c.UpdateEndpoint(ctx, ailanguage.UpdateEndpointRequest{
		EndpointId: &id, IfMatch: &etag,
		UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{DisplayName: common.String("never")},
	})
	wantOCIError(t, "UpdateEndpoint with a stale if-match", err, 412, "NoEtagMatch")

	// Change of compartment: no work request, UPDATING then ACTIVE.
	if _, err := c.ChangeEndpointCompartment(ctx, ailanguage.ChangeEndpointCompartmentRequest{
		EndpointId:                       &id,
		ChangeEndpointCompartmentDetails: ailanguage.ChangeEndpointCompartmentDetails{CompartmentId: common.String(otherCompartment)},
	}); err != nil {
		t.Fatalf("ChangeEndpointCompartment: %v", err)
	}
	got = waitEndpoint(t, c, id, func(e ailanguage.Endpoint) error {
		if e.LifecycleState != ailanguage.EndpointLifecycleStateActive || str(e.CompartmentId) != otherCompartment {
			return errorf("state %s, compartment %s", e.LifecycleState, str(e.CompartmentId))
		}
		return nil
	})
	moved, err := c.ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: common.String(otherCompartment)})
	if err != nil {
		t.Fatalf("ListEndpoints(%s): %v", otherCompartment, err)
	}
	if len(moved.Items) != 1 || str(moved.Items[0].Id) != id {
		t.Errorf("ListEndpoints(%s): %d items, want only %s", otherCompartment, len(moved.Items), id)
	}
	left, err := c.ListEndpoints(ctx, ailanguage.ListEndpointsRequest{CompartmentId: &root})
	if err != nil {
		t.Fatalf("ListEndpoints(%s): %v", root, err)
	}
	if len(left.Items) != 0 {
		t.Errorf("ListEndpoints(%s) after the move: %d items, want none", root, len(left.Items))
	}

	// Delete: DELETING, then DELETED (or gone).
	del, err := c.DeleteEndpoint(ctx, ailanguage.DeleteEndpointRequest{EndpointId: &id, IfMatch: got.Etag})
	if err != nil {
		t.Fatalf("DeleteEndpoint: %v", err)
	}
	if str(del.OpcWorkRequestId) == "" {
		t.Fatalf("DeleteEndpoint: no opc-work-request-id")
	}
	waitWorkRequest(t, c, str(del.OpcWorkRequestId), ailanguage.OperationTypeDeleteEndpoint, ailanguage.ActionTypeDeleted, id)
	eventually(t, "endpoint DELETED or 404", func() error {
		e, err := c.GetEndpoint(ctx, ailanguage.GetEndpointRequest{EndpointId: &id})
		if se, ok := common.IsServiceError(err); ok && se.GetHTTPStatusCode() == 404 && se.GetCode() == "NotAuthorizedOrNotFound" {
			return nil
		}
		if err != nil {
			return err
		}
		if e.LifecycleState != ailanguage.EndpointLifecycleStateDeleted {
			return errorf("state %s", e.LifecycleState)
		}
		return nil
	})

	// The retry token of an entity since deleted is invalidated.
	_, err = c.CreateEndpoint(ctx, create)
	wantOCIError(t, "CreateEndpoint replay after the delete", err, 409, "InvalidatedRetryToken")

	// An unknown endpoint is 404.
	_, err = c.GetEndpoint(ctx, ailanguage.GetEndpointRequest{EndpointId: common.String("ocid1.ailanguageendpoint.oc1.iad.doesnotexist")})
	wantOCIError(t, "GetEndpoint of an unknown id", err, 404, "NotAuthorizedOrNotFound")
}

func waitEndpoint(t *testing.T, c ailanguage.AIServiceLanguageClient, id string, ok func(ailanguage.Endpoint) error) ailanguage.GetEndpointResponse {
	t.Helper()
	ctx := testContext(t)
	var last ailanguage.GetEndpointResponse
	eventually(t, "endpoint "+id, func() error {
		var err error
		if last, err = c.GetEndpoint(ctx, ailanguage.GetEndpointRequest{EndpointId: &id}); err != nil {
			return err
		}
		return ok(last.Endpoint)
	})
	return last
}

// waitWorkRequest polls GetWorkRequest until it is SUCCEEDED and checks that
// it names the endpoint with the final action.
func waitWorkRequest(t *testing.T, c ailanguage.AIServiceLanguageClient, wrID string, op ailanguage.OperationTypeEnum, action ailanguage.ActionTypeEnum, endpoint string) {
	t.Helper()
	ctx := testContext(t)
	var wr ailanguage.WorkRequest
	eventually(t, "work request "+wrID+" SUCCEEDED", func() error {
		resp, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: &wrID})
		if err != nil {
			return err
		}
		wr = resp.WorkRequest
		if wr.Status == ailanguage.OperationStatusFailed {
			t.Fatalf("work request %s FAILED", wrID)
		}
		if wr.Status != ailanguage.OperationStatusSucceeded {
			return errorf("status %s", wr.Status)
		}
		return nil
	})
	if wr.OperationType != op || wr.TimeAccepted == nil || wr.TimeFinished == nil || wr.PercentComplete == nil || *wr.PercentComplete != 100 {
		t.Errorf("work request %s: %+v", wrID, wr)
	}
	if !slices.ContainsFunc(wr.Resources, func(r ailanguage.WorkRequestResource) bool {
		return strings.Contains(strings.ToLower(str(r.EntityType)), "endpoint") && r.ActionType == action && str(r.Identifier) == endpoint
	}) {
		t.Errorf("work request %s: resources %+v name no endpoint %s with action %s", wrID, wr.Resources, endpoint, action)
	}
}

// TestOCIForeignKey signs with a fresh RSA key under the emulator's tenancy
// and user: the emulator refuses it with 401 NotAuthenticated.
func TestOCIForeignKey(t *testing.T) {
	srv, _ := startEmulator(t)
	ctx := testContext(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(pub)
	var fp []string
	for _, b := range sum {
		fp = append(fp, hex.EncodeToString([]byte{b}))
	}
	for name, fingerprint := range map[string]string{
		"own fingerprint":                strings.Join(fp, ":"),
		"the emulator key's fingerprint": srv.Creds.OCIFingerprint,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			keyFile := filepath.Join(dir, "foreign.pem")
			pemText := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
			if err := os.WriteFile(keyFile, pemText, 0o600); err != nil {
				t.Fatal(err)
			}
			config := fmt.Sprintf("[DEFAULT]\nuser=%s\nfingerprint=%s\ntenancy=%s\nregion=%s\nkey_file=%s\n",
				srv.Creds.OCIUser, fingerprint, srv.Creds.OCITenancy, srv.Creds.OCIRegion, keyFile)
			configFile := filepath.Join(dir, "config")
			if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			c := ociClient(t, srv, configFile)
			_, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: common.String(srv.Creds.OCITenancy)})
			wantOCIError(t, "ListModels signed with a foreign key", err, 401, "NotAuthenticated")
			_, err = c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
				CompartmentId: common.String(srv.Creds.OCITenancy), ModelId: common.String("ocid1.ailanguagemodel.oc1.iad.x"),
			}})
			wantOCIError(t, "CreateEndpoint signed with a foreign key", err, 401, "NotAuthenticated")
		})
	}
}

// TestOCIFailedDeployment deploys the seeded model whose training FAILED:
// the create is accepted, then the endpoint ends FAILED with its
// lifecycleDetails and the work request FAILED with an error and logs. It
// also reads the model and project objects the SDK decodes polymorphically.
func TestOCIFailedDeployment(t *testing.T) {
	srv, dir := startEmulator(t)
	ctx := testContext(t)
	c := ociClient(t, srv, filepath.Join(dir, "credentials", "oci_config"))
	root := srv.Creds.OCITenancy

	failedState := ailanguage.ModelLifecycleStateFailed
	models, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &root, LifecycleState: failedState})
	if err != nil {
		t.Fatalf("ListModels(FAILED): %v", err)
	}
	if len(models.Items) == 0 {
		t.Fatalf("ListModels(FAILED): none")
	}
	failed := models.Items[0]
	m, err := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: failed.Id})
	if err != nil {
		t.Fatalf("GetModel: %v", err)
	}
	if m.LifecycleState != ailanguage.ModelLifecycleStateFailed || m.ModelDetails == nil || str(m.Etag) == "" {
		t.Errorf("GetModel: %+v", m.Model)
	}
	p, err := c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: m.ProjectId})
	if err != nil {
		t.Fatalf("GetProject: %v", err)
	}
	if p.LifecycleState != ailanguage.ProjectLifecycleStateActive || str(p.CompartmentId) != root {
		t.Errorf("GetProject: %+v", p.Project)
	}
	projects, err := c.ListProjects(ctx, ailanguage.ListProjectsRequest{CompartmentId: &root})
	if err != nil {
		t.Fatalf("ListProjects: %v", err)
	}
	if !slices.ContainsFunc(projects.Items, func(s ailanguage.ProjectSummary) bool { return str(s.Id) == str(m.ProjectId) }) {
		t.Errorf("ListProjects: %d items, none is %s", len(projects.Items), str(m.ProjectId))
	}

	// No retry token: the SDK makes one.
	created, err := c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
		CompartmentId: &root, ModelId: failed.Id,
	}})
	if err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	if str(created.DisplayName) == "" || created.InferenceUnits == nil || *created.InferenceUnits != 1 {
		t.Errorf("CreateEndpoint without displayName and inferenceUnits: %+v", created.Endpoint)
	}
	id, wrID := str(created.Id), str(created.OpcWorkRequestId)
	e := waitEndpoint(t, c, id, func(e ailanguage.Endpoint) error {
		if e.LifecycleState != ailanguage.EndpointLifecycleStateFailed {
			return errorf("state %s", e.LifecycleState)
		}
		return nil
	})
	if str(e.LifecycleDetails) == "" {
		t.Errorf("FAILED endpoint without lifecycleDetails")
	}
	wr, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: &wrID})
	if err != nil {
		t.Fatalf("GetWorkRequest: %v", err)
	}
	if wr.Status != ailanguage.OperationStatusFailed || wr.TimeFinished == nil {
		t.Errorf("GetWorkRequest of the failed create: %+v", wr.WorkRequest)
	}
	errs, err := c.ListWorkRequestErrors(ctx, ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: &wrID})
	if err != nil {
		t.Fatalf("ListWorkRequestErrors: %v", err)
	}
	if len(errs.Items) == 0 || str(errs.Items[0].Code) == "" || str(errs.Items[0].Message) == "" || errs.Items[0].Timestamp == nil {
		t.Errorf("ListWorkRequestErrors: %+v", errs.Items)
	}
	logs, err := c.ListWorkRequestLogs(ctx, ailanguage.ListWorkRequestLogsRequest{WorkRequestId: &wrID})
	if err != nil {
		t.Fatalf("ListWorkRequestLogs: %v", err)
	}
	if len(logs.Items) == 0 || str(logs.Items[0].Message) == "" || logs.Items[0].Timestamp == nil {
		t.Errorf("ListWorkRequestLogs: %+v", logs.Items)
	}

	// A FAILED endpoint can be deleted.
	if _, err := c.DeleteEndpoint(ctx, ailanguage.DeleteEndpointRequest{EndpointId: &id}); err != nil {
		t.Fatalf("DeleteEndpoint of the FAILED endpoint: %v", err)
	}
	waitEndpoint(t, c, id, func(e ailanguage.Endpoint) error {
		if e.LifecycleState != ailanguage.EndpointLifecycleStateDeleted {
			return errorf("state %s", e.LifecycleState)
		}
		return nil
	})
}
