//go:build conformance

package conformance_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// TestOCIProjectModelLifecycle drives projects and models with the
// unmodified SDK, its default retry policy included: create (with a retry
// token replayed), the work requests, training to ACTIVE with evaluation
// results the SDK decodes, a training that fails, update, change of
// compartment, the refusal of an unknown tag namespace, and delete.
func TestOCIProjectModelLifecycle(t *testing.T) {
	srv, dir := startEmulator(t)
	ctx := testContext(t)
	c := ociClient(t, srv, filepath.Join(dir, "credentials", "oci_config"))
	root := srv.Creds.OCITenancy

	_, err := c.CreateProject(ctx, ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{
		CompartmentId: &root, DefinedTags: map[string]map[string]interface{}{"Nope": {"k": "v"}}}})
	wantOCIError(t, "CreateProject with an unknown tag namespace", err, http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound")

	req := ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{CompartmentId: &root,
		DisplayName: common.String("conformance"), DefinedTags: map[string]map[string]interface{}{"Finance": {"Budget": "b1"}}},
		OpcRetryToken: common.String("conformance-project")}
	p, err := c.CreateProject(ctx, req)
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	again, err := c.CreateProject(ctx, req)
	if err != nil || str(again.Id) != str(p.Id) {
		t.Errorf("CreateProject replayed = %s, %v; want %s", str(again.Id), err, str(p.Id))
	}
	wr, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: p.OpcWorkRequestId})
	if err != nil || wr.OperationType != ailanguage.OperationTypeCreateProject || str(wr.Resources[0].Identifier) != str(p.Id) {
		t.Errorf("GetWorkRequest(create project) = %+v, %v", wr.WorkRequest, err)
	}

	create := func(failure string) ailanguage.Model {
		t.Helper()
		body := `{"trainingDelayMs": -1}`
		if failure != "" {
			body = `{"trainingDelayMs": -1, "trainingFailure": "` + failure + `"}`
		}
		putSettings(t, srv, body)
		m, err := c.CreateModel(ctx, ailanguage.CreateModelRequest{CreateModelDetails: ailanguage.CreateModelDetails{
			CompartmentId: &root, ProjectId: p.Id, DisplayName: common.String("conformance-model"),
			ModelDetails: ailanguage.NamedEntityRecognitionModelDetails{LanguageCode: common.String("en")},
			TrainingDataset: ailanguage.ObjectStorageDataset{LocationDetails: ailanguage.ObjectListDataset{
				NamespaceName: common.String("acme"), BucketName: common.String("ner"), ObjectNames: []string{"train.jsonl"}}},
			TestStrategy: ailanguage.TestAndValidationDatasetStrategy{TestingDataset: ailanguage.DataScienceLabelingDataset{DatasetId: common.String("ocid1.datalabelingdataset.oc1.iad.t")}},
		}})
		if err != nil {
			t.Fatalf("CreateModel: %v", err)
		}
		got, err := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: m.Id})
		if err != nil {
			t.Fatalf("GetModel: %v", err)
		}
		return got.Model
	}
	m := create("")
	res, ok := m.EvaluationResults.(ailanguage.NamedEntityRecognitionEvaluationResults)
	if m.LifecycleState != ailanguage.ModelLifecycleStateActive || !ok || len(res.EntityMetrics) == 0 || res.Metrics == nil {
		t.Errorf("trained model: %s, results %#v", m.LifecycleState, m.EvaluationResults)
	}
	if _, ok := m.TestStrategy.(ailanguage.TestAndValidationDatasetStrategy); !ok {
		t.Errorf("testStrategy = %#v", m.TestStrategy)
	}
	failed := create("Training failed: bad labels")
	if failed.LifecycleState != ailanguage.ModelLifecycleStateFailed || str(failed.LifecycleDetails) != "Training failed: bad labels" {
		t.Errorf("failed training: %s %q", failed.LifecycleState, str(failed.LifecycleDetails))
	}
	errs, err := c.ListWorkRequestErrors(ctx, ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: workRequestOf(t, c, root, str(failed.Id))})
	if err != nil || len(errs.Items) != 1 {
		t.Errorf("ListWorkRequestErrors(failed training) = %v, %v", errs.Items, err)
	}

	if _, err := c.UpdateModel(ctx, ailanguage.UpdateModelRequest{ModelId: m.Id, UpdateModelDetails: ailanguage.UpdateModelDetails{Description: common.String("v1")}}); err != nil {
		t.Errorf("UpdateModel: %v", err)
	}
	if _, err := c.ChangeModelCompartment(ctx, ailanguage.ChangeModelCompartmentRequest{ModelId: m.Id,
		ChangeModelCompartmentDetails: ailanguage.ChangeModelCompartmentDetails{CompartmentId: common.String(otherCompartment)}}); err != nil {
		t.Errorf("ChangeModelCompartment: %v", err)
	}
	// The SDK's default retry policy retries the 409 IncorrectState of a
	// model still UPDATING until it settles.
	for _, del := range []func() error{
		func() error { _, err := c.DeleteModel(ctx, ailanguage.DeleteModelRequest{ModelId: m.Id}); return err },
		func() error {
			_, err := c.DeleteModel(ctx, ailanguage.DeleteModelRequest{ModelId: failed.Id})
			return err
		},
		func() error {
			_, err := c.DeleteProject(ctx, ailanguage.DeleteProjectRequest{ProjectId: p.Id})
			return err
		},
	} {
		if err := del(); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
	got, err := c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: p.Id})
	if err != nil || got.LifecycleState != ailanguage.ProjectLifecycleStateDeleted {
		t.Errorf("GetProject after delete = %s, %v", got.LifecycleState, err)
	}
}

// workRequestOf finds the work request of a resource with ListWorkRequests.
func workRequestOf(t *testing.T, c ailanguage.AIServiceLanguageClient, comp, id string) *string {
	t.Helper()
	list, err := c.ListWorkRequests(testContext(t), ailanguage.ListWorkRequestsRequest{CompartmentId: &comp, ResourceId: &id})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("ListWorkRequests(%s) = %v, %v", id, list.Items, err)
	}
	return list.Items[0].Id
}

// putSettings sets the emulator's settings (server.Settings as JSON).
func putSettings(t *testing.T, srv *server.Server, body string) {
	t.Helper()
	var s server.Settings
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	srv.Apply(s)
}
