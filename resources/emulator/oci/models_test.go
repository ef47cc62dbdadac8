package oci

import (
	"strings"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"
	"github.com/oracle/oci-go-sdk/v65/common"
)

// wantServiceError fails unless err is an OCI error with status and code,
// and returns its message.
func wantServiceError(t *testing.T, what string, err error, status int, code string) string {
	t.Helper()
	se, ok := common.IsServiceError(err)
	if !ok {
		t.Fatalf("%s: %v, want a %d %s service error", what, err, status, code)
	}
	if se.GetHTTPStatusCode() != status || se.GetCode() != code {
		t.Fatalf("%s: %d %s (%s), want %d %s", what, se.GetHTTPStatusCode(), se.GetCode(), se.GetMessage(), status, code)
	}
	return se.GetMessage()
}

// trainingSet is an Object Storage training dataset.
func trainingSet() ailanguage.DatasetDetails {
	return ailanguage.ObjectStorageDataset{LocationDetails: ailanguage.ObjectListDataset{
		NamespaceName: common.String("acme"), BucketName: common.String("reviews"), ObjectNames: []string{"train.jsonl"}}}
}

func (env *testEnv) createModel(project, name string) ailanguage.CreateModelResponse {
	env.t.Helper()
	resp, err := env.client().CreateModel(env.t.Context(), ailanguage.CreateModelRequest{CreateModelDetails: ailanguage.CreateModelDetails{
		CompartmentId: &env.compartment, ProjectId: &project, DisplayName: &name,
		ModelDetails:    ailanguage.TextClassificationModelDetails{},
		TrainingDataset: trainingSet(),
	}})
	if err != nil {
		env.t.Fatalf("CreateModel: %v", err)
	}
	return resp
}

// TestEmulatorProjectLifecycle walks a project through create, update,
// change of compartment and delete with the official SDK, each step through
// its work request (a change of compartment has none), and replays its
// create with the retry token.
func TestEmulatorProjectLifecycle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	env.emu.SetDelays(10*time.Second, 5*time.Second, 5*time.Second)
	c, ctx := env.client(), t.Context()

	req := ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{
		CompartmentId: &env.compartment, DisplayName: common.String("reviews"),
		DefinedTags: map[string]map[string]interface{}{"operations": {"costcenter": "42"}}, // names compare without case
	}, OpcRetryToken: common.String("tok-project")}
	created, err := c.CreateProject(ctx, req)
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	if created.LifecycleState != ailanguage.ProjectLifecycleStateCreating || created.OpcWorkRequestId == nil || created.Etag == nil ||
		!strings.HasPrefix(deref(created.Id), "ocid1.ailanguageproject.oc1.") {
		t.Fatalf("CreateProject = %+v, want a CREATING project with a work request and an etag", created)
	}
	if created.SystemTags["orcl-cloud"]["free-tier-retained"] != "true" || created.DefinedTags["Oracle-Tags"]["CreatedBy"] != env.creds.OCIUser {
		t.Errorf("new project's tags: system %v defined %v; want orcl-cloud.free-tier-retained and the Oracle-Tags defaults", created.SystemTags, created.DefinedTags)
	}
	clock.Advance(5 * time.Second)
	wr, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil || wr.OperationType != ailanguage.OperationTypeCreateProject || wr.Status != ailanguage.OperationStatusInProgress ||
		*wr.PercentComplete != 50 || *wr.Resources[0].EntityType != "project" || wr.Resources[0].ActionType != ailanguage.ActionTypeInProgress {
		t.Errorf("work request half way = %+v, %v; want CREATE_PROJECT IN_PROGRESS 50%% on the project", wr.WorkRequest, err)
	}
	again, err := c.CreateProject(ctx, req)
	if err != nil || deref(again.Id) != deref(created.Id) {
		t.Errorf("CreateProject replayed with its token = %v, %v; want %s again", again.Id, err, deref(created.Id))
	}
	clock.Advance(5 * time.Second)
	got, err := c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: created.Id})
	if err != nil || got.LifecycleState != ailanguage.ProjectLifecycleStateActive {
		t.Fatalf("GetProject after the create = %v, %v; want ACTIVE", got.LifecycleState, err)
	}
	wr, _ = c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if wr.Status != ailanguage.OperationStatusSucceeded || wr.Resources[0].ActionType != ailanguage.ActionTypeCreated {
		t.Errorf("work request after the create = %s %s, want SUCCEEDED CREATED", wr.Status, wr.Resources[0].ActionType)
	}

	_, err = c.UpdateProject(ctx, ailanguage.UpdateProjectRequest{ProjectId: created.Id, IfMatch: common.String("stale"),
		UpdateProjectDetails: ailanguage.UpdateProjectDetails{Description: common.String("x")}})
	wantServiceError(t, "UpdateProject with a stale etag", err, 412, "NoEtagMatch")
	upd, err := c.UpdateProject(ctx, ailanguage.UpdateProjectRequest{ProjectId: created.Id, IfMatch: got.Etag,
		UpdateProjectDetails: ailanguage.UpdateProjectDetails{Description: common.String("customer reviews"), DefinedTags: map[string]map[string]interface{}{}}})
	if err != nil || upd.OpcWorkRequestId == nil {
		t.Fatalf("UpdateProject = %v, %v", upd, err)
	}
	_, err = c.UpdateProject(ctx, ailanguage.UpdateProjectRequest{ProjectId: created.Id, UpdateProjectDetails: ailanguage.UpdateProjectDetails{}})
	wantServiceError(t, "UpdateProject while UPDATING", err, 409, "IncorrectState")
	clock.Advance(5 * time.Second)
	got, _ = c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: created.Id})
	if got.LifecycleState != ailanguage.ProjectLifecycleStateActive || deref(got.Description) != "customer reviews" ||
		got.DefinedTags["Oracle-Tags"]["CreatedOn"] == nil || got.DefinedTags["operations"] != nil {
		t.Errorf("after the update: %s %q defined %v; want ACTIVE, the new description, only the Oracle-Tags defaults", got.LifecycleState, deref(got.Description), got.DefinedTags)
	}

	if _, err := c.ChangeProjectCompartment(ctx, ailanguage.ChangeProjectCompartmentRequest{ProjectId: created.Id,
		ChangeProjectCompartmentDetails: ailanguage.ChangeProjectCompartmentDetails{CompartmentId: &env.otherCompartment}}); err != nil {
		t.Fatalf("ChangeProjectCompartment: %v", err)
	}
	clock.Advance(5 * time.Second)
	got, _ = c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: created.Id})
	if deref(got.CompartmentId) != env.otherCompartment || got.LifecycleState != ailanguage.ProjectLifecycleStateActive {
		t.Errorf("after the move: %s in %s", got.LifecycleState, deref(got.CompartmentId))
	}
	list, err := c.ListProjects(ctx, ailanguage.ListProjectsRequest{CompartmentId: &env.otherCompartment})
	if err != nil || len(list.Items) != 1 || deref(list.Items[0].Id) != deref(created.Id) {
		t.Errorf("ListProjects(other compartment) = %v, %v; want the moved project", list.Items, err)
	}

	del, err := c.DeleteProject(ctx, ailanguage.DeleteProjectRequest{ProjectId: created.Id})
	if err != nil || del.OpcWorkRequestId == nil {
		t.Fatalf("DeleteProject = %v, %v", del, err)
	}
	clock.Advance(5 * time.Second)
	got, err = c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: created.Id})
	if err != nil || got.LifecycleState != ailanguage.ProjectLifecycleStateDeleted {
		t.Errorf("GetProject after the delete = %v, %v; want DELETED", got.LifecycleState, err)
	}
	_, err = c.CreateProject(ctx, req)
	wantServiceError(t, "CreateProject replayed after the delete", err, 409, "InvalidatedRetryToken")
	clock.Advance(deletedRetention + time.Second)
	_, err = c.GetProject(ctx, ailanguage.GetProjectRequest{ProjectId: created.Id})
	wantServiceError(t, "GetProject an hour after the delete", err, 404, "NotAuthorizedOrNotFound")
}

// TestEmulatorModelTraining trains a model: it is CREATING while its work
// request progresses, then ACTIVE with evaluation results the SDK decodes,
// which the list's summaries leave out.
func TestEmulatorModelTraining(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	env.emu.SetTraining(4*time.Minute, "")
	c, ctx := env.client(), t.Context()

	created := env.createModel(env.project, "reviews-classifier")
	if created.LifecycleState != ailanguage.ModelLifecycleStateCreating || created.OpcWorkRequestId == nil || created.Location == nil {
		t.Fatalf("CreateModel = %+v, want CREATING with a work request and a location", created.Model)
	}
	details, ok := created.ModelDetails.(ailanguage.TextClassificationModelDetails)
	if !ok || deref(details.LanguageCode) != "en" || details.ClassificationMode == nil {
		t.Errorf("modelDetails = %#v, want the defaults filled: languageCode en, MULTI_CLASS", created.ModelDetails)
	}
	clock.Advance(time.Minute)
	wr, err := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	if err != nil || wr.OperationType != ailanguage.OperationTypeCreateModel || *wr.PercentComplete != 25 || *wr.Resources[0].EntityType != "model" {
		t.Errorf("work request a quarter in = %+v, %v", wr.WorkRequest, err)
	}
	_, err = c.UpdateModel(ctx, ailanguage.UpdateModelRequest{ModelId: created.Id, UpdateModelDetails: ailanguage.UpdateModelDetails{DisplayName: common.String("x")}})
	wantServiceError(t, "UpdateModel while training", err, 409, "IncorrectState")
	clock.Advance(3 * time.Minute)
	got, err := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: created.Id})
	if err != nil || got.LifecycleState != ailanguage.ModelLifecycleStateActive || got.Version == nil {
		t.Fatalf("GetModel after training = %v, %v; want ACTIVE with a version", got.LifecycleState, err)
	}
	res, ok := got.EvaluationResults.(ailanguage.TextClassificationEvaluationResults)
	if !ok || res.Metrics == nil || *res.Metrics.Accuracy == 0 || len(res.ClassMetrics) != 2 || len(res.Labels) != 2 {
		t.Errorf("evaluationResults = %#v, want text classification metrics", got.EvaluationResults)
	}
	if _, ok := got.TrainingDataset.(ailanguage.ObjectStorageDataset); !ok {
		t.Errorf("trainingDataset = %#v, want the Object Storage dataset of the create", got.TrainingDataset)
	}
	list, err := c.ListModels(ctx, ailanguage.ListModelsRequest{CompartmentId: &env.compartment, DisplayName: common.String("reviews-classifier")})
	if err != nil || len(list.Items) != 1 || list.Items[0].LifecycleState != ailanguage.ModelLifecycleStateActive {
		t.Errorf("ListModels = %v, %v", list.Items, err)
	}

	upd, err := c.UpdateModel(ctx, ailanguage.UpdateModelRequest{ModelId: created.Id, IfMatch: got.Etag,
		UpdateModelDetails: ailanguage.UpdateModelDetails{DisplayName: common.String("renamed")}})
	if err != nil || upd.OpcWorkRequestId == nil {
		t.Fatalf("UpdateModel = %v, %v", upd, err)
	}
	got, _ = c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: created.Id})
	if deref(got.DisplayName) != "renamed" || got.LifecycleState != ailanguage.ModelLifecycleStateActive {
		t.Errorf("after the update: %q %s", deref(got.DisplayName), got.LifecycleState)
	}
}

// TestEmulatorModelTrainingFails makes training fail: the model ends
// FAILED with the reason in lifecycleDetails, its work request FAILED with
// the reason as its error.
func TestEmulatorModelTrainingFails(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	const why = "Training failed: the training dataset contains no labelled records"
	env.emu.SetTraining(0, why)
	c, ctx := env.client(), t.Context()
	created := env.createModel(env.project, "doomed")
	got, err := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: created.Id})
	if err != nil || got.LifecycleState != ailanguage.ModelLifecycleStateFailed || deref(got.LifecycleDetails) != why || got.EvaluationResults != nil {
		t.Fatalf("GetModel = %v %q, %v; want FAILED with the reason and no results", got.LifecycleState, deref(got.LifecycleDetails), err)
	}
	wr, _ := c.GetWorkRequest(ctx, ailanguage.GetWorkRequestRequest{WorkRequestId: created.OpcWorkRequestId})
	errs, err := c.ListWorkRequestErrors(ctx, ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: created.OpcWorkRequestId})
	if wr.Status != ailanguage.OperationStatusFailed || err != nil || len(errs.Items) != 1 || deref(errs.Items[0].Code) != "TrainingFailed" || deref(errs.Items[0].Message) != why {
		t.Errorf("work request %s, errors %v, %v; want FAILED with one TrainingFailed error", wr.Status, errs.Items, err)
	}
	_, err = c.UpdateModel(ctx, ailanguage.UpdateModelRequest{ModelId: created.Id, UpdateModelDetails: ailanguage.UpdateModelDetails{DisplayName: common.String("x")}})
	wantServiceError(t, "UpdateModel of a FAILED model", err, 409, "Conflict")
	if _, err := c.DeleteModel(ctx, ailanguage.DeleteModelRequest{ModelId: created.Id}); err != nil {
		t.Errorf("DeleteModel of a FAILED model: %v", err)
	}
}

// TestEmulatorRefusals pins what creates and deletes of projects and
// models refuse: unknown tag namespaces and keys (on endpoints too),
// missing or bad model inputs, an unknown project; deletes in dependency
// order succeed.
func TestEmulatorRefusals(t *testing.T) {
	t.Parallel()
	env := newEnv(t, envOptions{})
	env.emu.SetTraining(0, "")
	c, ctx := env.client(), t.Context()

	for name, tags := range map[string]map[string]map[string]interface{}{
		"TagNamespace Nope does not exists.":                               {"Nope": {"k": "v"}},
		"TagDefinition Colour in TagNamespace Operations does not exists.": {"Operations": {"Colour": "red"}},
	} {
		_, err := c.CreateProject(ctx, ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{CompartmentId: &env.compartment, DefinedTags: tags}})
		msg := wantServiceError(t, "CreateProject with tags "+mustJSON(tags), err, 400, "RelatedResourceNotAuthorizedOrNotFound")
		if msg != "The following tag namespaces / keys are not authorized or not found: "+name {
			t.Errorf("message %q, want it to end %q", msg, name)
		}
		_, err = c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{
			CompartmentId: &env.compartment, ModelId: &env.activeModel, DefinedTags: tags}})
		wantServiceError(t, "CreateEndpoint with tags "+mustJSON(tags), err, 400, "RelatedResourceNotAuthorizedOrNotFound")
	}

	bad := map[string]struct {
		d            ailanguage.CreateModelDetails
		status       int
		code, phrase string
	}{
		"no training data": {ailanguage.CreateModelDetails{CompartmentId: &env.compartment, ProjectId: &env.project,
			ModelDetails: ailanguage.NamedEntityRecognitionModelDetails{}}, 400, "InvalidParameter", "trainingDataset is required"},
		"no objects": {ailanguage.CreateModelDetails{CompartmentId: &env.compartment, ProjectId: &env.project,
			ModelDetails: ailanguage.TextClassificationModelDetails{}, TrainingDataset: ailanguage.ObjectStorageDataset{LocationDetails: ailanguage.ObjectListDataset{
				NamespaceName: common.String("acme"), BucketName: common.String("b"), ObjectNames: []string{}}}}, 400, "MissingParameter", "objectNames"},
		"unknown project": {ailanguage.CreateModelDetails{CompartmentId: &env.compartment, ProjectId: common.String("ocid1.ailanguageproject.oc1.iad.nope"),
			ModelDetails: ailanguage.TextClassificationModelDetails{}, TrainingDataset: trainingSet()}, 400, "RelatedResourceNotAuthorizedOrNotFound", "project"},
	}
	for name, tc := range bad {
		_, err := c.CreateModel(ctx, ailanguage.CreateModelRequest{CreateModelDetails: tc.d})
		if msg := wantServiceError(t, "CreateModel "+name, err, tc.status, tc.code); !strings.Contains(msg, tc.phrase) {
			t.Errorf("CreateModel %s: message %q, want it to mention %q", name, msg, tc.phrase)
		}
	}

	proj, err := c.CreateProject(ctx, ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{CompartmentId: &env.compartment}})
	if err != nil {
		t.Fatal(err)
	}
	model := env.createModel(deref(proj.Id), "used")
	ep, err := c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{CompartmentId: &env.compartment, ModelId: model.Id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, del := range []func() error{
		func() error {
			_, err := c.DeleteEndpoint(ctx, ailanguage.DeleteEndpointRequest{EndpointId: ep.Id})
			return err
		},
		func() error {
			_, err := c.DeleteModel(ctx, ailanguage.DeleteModelRequest{ModelId: model.Id})
			return err
		},
		func() error {
			_, err := c.DeleteProject(ctx, ailanguage.DeleteProjectRequest{ProjectId: proj.Id})
			return err
		},
	} {
		if err := del(); err != nil {
			t.Errorf("delete in dependency order: %v", err)
		}
	}
}

// TestEmulatorRefusesDeletingWhatIsInUse: as OCI documents, a model that
// an endpoint deploys, and a project that holds a model or an endpoint,
// cannot be deleted until those are DELETED (409 Conflict); an endpoint
// moved to another model frees the first one.
func TestEmulatorRefusesDeletingWhatIsInUse(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	env := newEnv(t, envOptions{now: clock.Now})
	env.emu.SetTraining(time.Minute, "")
	env.emu.SetDelays(0, 5*time.Second, 5*time.Second)
	c, ctx := env.client(), t.Context()

	proj, err := c.CreateProject(ctx, ailanguage.CreateProjectRequest{CreateProjectDetails: ailanguage.CreateProjectDetails{CompartmentId: &env.compartment}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := env.createModel(deref(proj.Id), "first"), env.createModel(deref(proj.Id), "second")
	clock.Advance(time.Minute)
	ep, err := c.CreateEndpoint(ctx, ailanguage.CreateEndpointRequest{CreateEndpointDetails: ailanguage.CreateEndpointDetails{CompartmentId: &env.compartment, ModelId: first.Id}})
	if err != nil {
		t.Fatal(err)
	}
	deleteModel := func(m ailanguage.CreateModelResponse) error {
		_, err := c.DeleteModel(ctx, ailanguage.DeleteModelRequest{ModelId: m.Id})
		return err
	}
	deleteProject := func() error {
		_, err := c.DeleteProject(ctx, ailanguage.DeleteProjectRequest{ProjectId: proj.Id})
		return err
	}

	msg := wantServiceError(t, "DeleteModel of a deployed model", deleteModel(first), 409, "Conflict")
	if !strings.Contains(msg, deref(ep.Id)) {
		t.Errorf("message %q, want it to name the endpoint %s", msg, deref(ep.Id))
	}
	msg = wantServiceError(t, "DeleteProject holding models", deleteProject(), 409, "Conflict")
	for _, id := range []string{deref(first.Id), deref(second.Id), deref(ep.Id)} {
		if !strings.Contains(msg, id) {
			t.Errorf("message %q, want it to name %s", msg, id)
		}
	}
	if got, _ := c.GetModel(ctx, ailanguage.GetModelRequest{ModelId: first.Id}); got.LifecycleState != ailanguage.ModelLifecycleStateActive {
		t.Errorf("the refused delete left the model %s", got.LifecycleState)
	}

	// The endpoint moves to the second model: the first is free, the
	// second is not.
	if _, err := c.UpdateEndpoint(ctx, ailanguage.UpdateEndpointRequest{EndpointId: ep.Id, UpdateEndpointDetails: ailanguage.UpdateEndpointDetails{ModelId: second.Id}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	if err := deleteModel(first); err != nil {
		t.Errorf("DeleteModel of a model no endpoint deploys: %v", err)
	}
	wantServiceError(t, "DeleteModel of the model the endpoint moved to", deleteModel(second), 409, "Conflict")

	// An endpoint still DELETING counts: only DELETED frees the model.
	if _, err := c.DeleteEndpoint(ctx, ailanguage.DeleteEndpointRequest{EndpointId: ep.Id}); err != nil {
		t.Fatal(err)
	}
	wantServiceError(t, "DeleteModel while its endpoint is DELETING", deleteModel(second), 409, "Conflict")
	clock.Advance(5 * time.Second)
	if err := deleteModel(second); err != nil {
		t.Errorf("DeleteModel once its endpoint is DELETED: %v", err)
	}
	wantServiceError(t, "DeleteProject while its models are DELETING", deleteProject(), 409, "Conflict")
	clock.Advance(5 * time.Second)
	if err := deleteProject(); err != nil {
		t.Errorf("DeleteProject once everything in it is DELETED: %v", err)
	}
}
