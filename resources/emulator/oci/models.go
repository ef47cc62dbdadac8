package oci

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator"
)

// modelView is the Model JSON; without timeUpdated, trainingDataset,
// testStrategy and evaluationResults, the ModelSummary.
type modelView struct {
	ID                string                    `json:"id"`
	DisplayName       string                    `json:"displayName"`
	CompartmentID     string                    `json:"compartmentId"`
	ProjectID         string                    `json:"projectId"`
	ModelDetails      map[string]any            `json:"modelDetails"`
	TimeCreated       string                    `json:"timeCreated"`
	LifecycleState    string                    `json:"lifecycleState"`
	Description       *string                   `json:"description,omitempty"`
	TimeUpdated       string                    `json:"timeUpdated,omitempty"`
	LifecycleDetails  *string                   `json:"lifecycleDetails,omitempty"`
	TrainingDataset   map[string]any            `json:"trainingDataset,omitempty"`
	EvaluationResults map[string]any            `json:"evaluationResults,omitempty"`
	TestStrategy      map[string]any            `json:"testStrategy,omitempty"`
	Version           *string                   `json:"version,omitempty"`
	FreeformTags      map[string]string         `json:"freeformTags"`
	DefinedTags       map[string]map[string]any `json:"definedTags"`
	SystemTags        map[string]map[string]any `json:"systemTags"`
}

// summary is the ModelSummary of the model.
func (m modelView) summary() modelView {
	m.TimeUpdated, m.TrainingDataset, m.TestStrategy, m.EvaluationResults = "", nil, nil, nil
	return m
}

// modelRecord is what the store holds per model: the view as of the last
// settled transition, and the transition in progress (a training).
type modelRecord struct {
	modelView
	lifecycle
}

func (r *modelRecord) life() *lifecycle { return &r.lifecycle }
func (r *modelRecord) fields() fields {
	v := &r.modelView
	return fields{id: &v.ID, compartment: &v.CompartmentID, state: &v.LifecycleState, updated: &v.TimeUpdated, details: &v.LifecycleDetails, definedTags: &v.DefinedTags}
}

// modelKind finishes a training that succeeded with evaluation results and
// a version.
var modelKind = kind[modelRecord, *modelRecord]{bucket: bucketModels, entity: entityModel, finish: func(m *modelRecord, failure string) {
	if failure != "" {
		return
	}
	m.EvaluationResults = evaluationResults(m.ModelDetails)
	if m.Version == nil {
		m.Version = strPtr("1.0")
	}
}}

// loadModel reads and settles a model.
func (e *Emulator) loadModel(tx emulator.Tx, id string, now time.Time) (*modelRecord, error) {
	return modelKind.load(tx, id, now)
}

// DefaultTrainingDelay is how long a model trains on the emulator unless
// SetTraining says otherwise: the real service takes minutes, which no
// demo or test should wait.
const DefaultTrainingDelay = time.Second

// SetTraining sets how long the trainings started from now on take, and
// why they fail: "" makes them succeed, any other text makes them end
// FAILED with that text as the model's lifecycleDetails. Trainings already
// started keep what they began with.
func (e *Emulator) SetTraining(delay time.Duration, failure string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.training = training{delay: delay, failure: failure, set: true}
}

// training is the setting of SetTraining.
type training struct {
	delay   time.Duration
	failure string
	set     bool // false: DefaultTrainingDelay, no failure
}

func (e *Emulator) getTraining() (time.Duration, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.training.set {
		return DefaultTrainingDelay, ""
	}
	return e.training.delay, e.training.failure
}

type createModelDetails struct {
	commonDetails
	ProjectID       *string        `json:"projectId"`
	ModelDetails    map[string]any `json:"modelDetails"`
	TrainingDataset map[string]any `json:"trainingDataset"`
	TestStrategy    map[string]any `json:"testStrategy"`
}

// modelTypes are the SDK's ModelDetailsModelTypeEnum; customModelTypes
// those trained from a dataset of the caller's.
var (
	modelTypes = []string{"NAMED_ENTITY_RECOGNITION", "TEXT_CLASSIFICATION", "PRE_TRAINED_NAMED_ENTITY_RECOGNITION",
		"PRE_TRAINED_TEXT_CLASSIFICATION", "PRE_TRAINED_SENTIMENT_ANALYSIS", "PRE_TRAINED_KEYPHRASE_EXTRACTION",
		"PRE_TRAINED_LANGUAGE_DETECTION", "PRE_TRAINED_PII", "PRE_TRAINED_HEALTH_NLU", "PRE_TRAINED_SUMMARIZATION",
		"PRE_TRAINED_UNIVERSAL", "PII", "PRE_TRAINED_TRANSLATION", "HEALTH_NLU"}
	customModelTypes = []string{"NAMED_ENTITY_RECOGNITION", "TEXT_CLASSIFICATION", "PII", "HEALTH_NLU"}
)

func invalid(format string, args ...any) error {
	return errorf(http.StatusBadRequest, "InvalidParameter", format, args...)
}

func missing(field string) error {
	return errorf(http.StatusBadRequest, "MissingParameter", "%s is required", field)
}

// str returns m[key] when it is a non-empty string.
func str(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok && s != ""
}

// checkModelDetails checks the modelDetails of a create and fills the
// defaults the service fills: languageCode "en", and for a text classifier
// the MULTI_CLASS classificationMode.
func checkModelDetails(d map[string]any) error {
	typ, ok := str(d, "modelType")
	if !ok {
		return missing("modelDetails.modelType")
	}
	if !slices.Contains(modelTypes, typ) {
		return invalid("modelDetails.modelType %q is not one of %s", typ, strings.Join(modelTypes, ", "))
	}
	if _, ok := d["languageCode"]; !ok {
		d["languageCode"] = "en"
	}
	if typ == "TEXT_CLASSIFICATION" {
		cm, _ := d["classificationMode"].(map[string]any)
		if cm == nil {
			d["classificationMode"] = map[string]any{"classificationMode": "MULTI_CLASS"}
		} else if mode, _ := str(cm, "classificationMode"); mode != "MULTI_CLASS" && mode != "MULTI_LABEL" {
			return invalid("modelDetails.classificationMode.classificationMode %q is not one of MULTI_CLASS, MULTI_LABEL", mode)
		}
	}
	return nil
}

// checkDataset checks a DatasetDetails at field.
func checkDataset(field string, d map[string]any) error {
	switch typ, _ := str(d, "datasetType"); typ {
	case "":
		return missing(field + ".datasetType")
	case "DATA_SCIENCE_LABELING":
		if _, ok := str(d, "datasetId"); !ok {
			return missing(field + ".datasetId")
		}
	case "OBJECT_STORAGE":
		loc, _ := d["locationDetails"].(map[string]any)
		if loc == nil {
			return missing(field + ".locationDetails")
		}
		if lt, _ := str(loc, "locationType"); lt != "OBJECT_LIST" {
			return invalid("%s.locationDetails.locationType %q is not one of OBJECT_LIST", field, lt)
		}
		for _, k := range []string{"namespaceName", "bucketName"} {
			if _, ok := str(loc, k); !ok {
				return missing(field + ".locationDetails." + k)
			}
		}
		if names, _ := loc["objectNames"].([]any); len(names) == 0 {
			return missing(field + ".locationDetails.objectNames")
		}
	default:
		return invalid("%s.datasetType %q is not one of OBJECT_STORAGE, DATA_SCIENCE_LABELING", field, typ)
	}
	return nil
}

// checkTestStrategy checks a TestStrategy.
func checkTestStrategy(t map[string]any) error {
	if typ, _ := str(t, "strategyType"); typ != "TEST_AND_VALIDATION_DATASET" {
		if typ == "" {
			return missing("testStrategy.strategyType")
		}
		return invalid("testStrategy.strategyType %q is not one of TEST_AND_VALIDATION_DATASET", typ)
	}
	test, _ := t["testingDataset"].(map[string]any)
	if test == nil {
		return missing("testStrategy.testingDataset")
	}
	if err := checkDataset("testStrategy.testingDataset", test); err != nil {
		return err
	}
	if v, ok := t["validationDataset"].(map[string]any); ok {
		return checkDataset("testStrategy.validationDataset", v)
	}
	return nil
}

func (e *Emulator) createModel(r *http.Request, _ []string, body []byte) (*response, error) {
	var d createModelDetails
	if err := decodeBody(body, &d); err != nil {
		return nil, err
	}
	switch {
	case d.CompartmentID == nil || *d.CompartmentID == "":
		return nil, missing("compartmentId")
	case d.ProjectID == nil || *d.ProjectID == "":
		return nil, missing("projectId")
	case d.ModelDetails == nil:
		return nil, missing("modelDetails")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	if err := checkModelDetails(d.ModelDetails); err != nil {
		return nil, err
	}
	typ, _ := str(d.ModelDetails, "modelType")
	if d.TrainingDataset == nil && slices.Contains(customModelTypes, typ) {
		return nil, invalid("trainingDataset is required to train a model of type %s", typ)
	}
	if d.TrainingDataset != nil {
		if err := checkDataset("trainingDataset", d.TrainingDataset); err != nil {
			return nil, err
		}
	}
	if d.TestStrategy != nil {
		if err := checkTestStrategy(d.TestStrategy); err != nil {
			return nil, err
		}
	}
	token, err := requestRetryToken(r)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	delay, failure := e.getTraining()
	var resp *response
	err = e.store.Update(func(tx emulator.Tx) error {
		if replay, err := e.replay(tx, token, r, body, now); replay != nil || err != nil {
			resp = replay
			return err
		}
		if err := checkCompartment(tx, *d.CompartmentID); err != nil {
			return err
		}
		project, err := projectKind.load(tx, *d.ProjectID, now)
		if isAPIError(err) || (err == nil && project.LifecycleState == stateDeleted) {
			return errorf(http.StatusBadRequest, "RelatedResourceNotAuthorizedOrNotFound", "project %s was not found or you are not authorized to use it", *d.ProjectID)
		}
		if err != nil {
			return err
		}
		if project.LifecycleState != stateActive {
			return errorf(http.StatusConflict, "IncorrectState", "project %s is in state %s; models can only be created in an ACTIVE project", project.ID, project.LifecycleState)
		}
		if err := checkDefinedTags(tx, d.DefinedTags); err != nil {
			return err
		}
		rec := &modelRecord{modelView: modelView{
			ID: e.newOCID("ailanguagemodel"), CompartmentID: *d.CompartmentID, ProjectID: project.ID, TimeCreated: fmtTime(now),
			DisplayName: "ailanguagemodel" + now.Format("20060102150405"), Description: d.Description,
			ModelDetails: d.ModelDetails, TrainingDataset: d.TrainingDataset, TestStrategy: d.TestStrategy,
			FreeformTags: tagsOrEmpty(d.FreeformTags), DefinedTags: withTagDefaults(d.DefinedTags, e.creds.OCIUser, now),
			SystemTags: systemTagsOfNew(),
		}}
		if d.DisplayName != nil {
			rec.DisplayName = *d.DisplayName
		}
		wr, err := e.start(tx, bucketModels, entityModel, rec, stateCreating, opCreate, "CREATE_MODEL", now, delay, failure)
		if err != nil {
			return err
		}
		resp, err = jsonResponse(http.StatusOK, rec.modelView, map[string]string{
			"etag": etagOf(rec.modelView), "location": "http://" + r.Host + apiPrefix + "/models/" + rec.ID,
			"opc-work-request-id": wr,
		})
		if err != nil {
			return err
		}
		return e.remember(tx, token, r, body, rec.ID, resp, now)
	})
	return resp, err
}

func (e *Emulator) getModel(_ *http.Request, args []string, _ []byte) (*response, error) {
	return getObject(e, modelKind, args[0], func(m *modelRecord) any { return m.modelView })
}

func (e *Emulator) listModels(r *http.Request, _ []string, _ []byte) (*response, error) {
	q := r.URL.Query()
	items, err := listObjects(e, q, modelKind, func(rec *modelRecord) (modelView, bool) {
		m := rec.modelView
		ok := matchParam(q, "modelId", m.ID) && matchParam(q, "projectId", m.ProjectID) && matchParam(q, "displayName", m.DisplayName)
		return m.summary(), ok
	})
	if err != nil {
		return nil, err
	}
	return listPage(q, items, sortKeys[modelView]{
		name:    func(m modelView) string { return m.DisplayName },
		created: func(m modelView) string { return m.TimeCreated },
	})
}

func (e *Emulator) updateModel(r *http.Request, args []string, body []byte) (*response, error) {
	return updateObject(e, modelKind, r, args[0], body, "UPDATE_MODEL", func(m *modelRecord) any { return m.modelView },
		func(m *modelRecord, d *commonDetails) {
			v := &m.modelView
			d.applyUpdate(&v.Description, &v.DisplayName, &v.FreeformTags, &v.DefinedTags)
		})
}

func (e *Emulator) deleteModel(r *http.Request, args []string, _ []byte) (*response, error) {
	now := e.now().UTC()
	delay := e.getDelays().delete
	var resp *response
	err := e.store.Update(func(tx emulator.Tx) error {
		rec, err := modelKind.mutable(tx, r, args[0], now, func(m *modelRecord) any { return m.modelView })
		if err != nil {
			return err
		}
		switch rec.LifecycleState {
		case stateDeleting:
			resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": rec.Pending.WorkRequestID}}
			return nil
		case stateUpdating:
			return modelKind.busy(rec)
		}
		if err := e.modelInUse(tx, rec.ID, now); err != nil {
			return err
		}
		// Deleting a model still training cancels the training.
		if p := rec.Pending; p != nil && p.WorkRequestID != "" {
			if err := finishWorkRequest(tx, p.WorkRequestID, now, "the training was cancelled: the model was deleted"); err != nil {
				return err
			}
		}
		wr, err := e.start(tx, bucketModels, entityModel, rec, stateDeleting, opDelete, "DELETE_MODEL", now, delay, "")
		if err != nil {
			return err
		}
		resp = &response{status: http.StatusAccepted, header: map[string]string{"opc-work-request-id": wr}}
		return nil
	})
	return resp, err
}

// modelInUse refuses the delete of model id while an endpoint that is not
// DELETED deploys it: 409 Conflict, as OCI documents ("fails with a 409
// error unless all associated resources are in a DELETED state").
func (e *Emulator) modelInUse(tx emulator.Tx, id string, now time.Time) error {
	var users []string
	err := e.eachEndpoint(tx, now, func(ep *endpointRecord) {
		if ep.View.ModelID == id && ep.View.LifecycleState != stateDeleted {
			users = append(users, ep.View.ID)
		}
	})
	if err != nil {
		return err
	}
	if len(users) > 0 {
		slices.Sort(users)
		return errorf(http.StatusConflict, "Conflict", "model %s is used by endpoint %s; delete the endpoint, or update it to deploy another model, before deleting the model",
			id, strings.Join(users, ", "))
	}
	return nil
}

func (e *Emulator) changeModelCompartment(r *http.Request, args []string, body []byte) (*response, error) {
	return e.changeCompartment(r, body, e.moveObject(func(tx emulator.Tx, now time.Time) (object, error) {
		rec, err := modelKind.mutable(tx, r, args[0], now, func(m *modelRecord) any { return m.modelView })
		if err == nil {
			err = modelKind.busy(rec)
		}
		return rec, err
	}, bucketModels, entityModel))
}

// evaluationResults are the made-up but plausible results of a training
// of a model of details' type: for a text classifier, per-class metrics of
// two classes; for an entity recogniser, per-entity metrics of two
// entities. Other types have none.
func evaluationResults(details map[string]any) map[string]any {
	typ, _ := str(details, "modelType")
	labels := []any{"negative", "positive"}
	confusion := map[string]any{
		"negative": map[string]any{"matrix": map[string]any{"negative": 46.0, "positive": 4.0}},
		"positive": map[string]any{"matrix": map[string]any{"negative": 3.0, "positive": 47.0}},
	}
	metrics := map[string]any{
		"microF1": 0.93, "microPrecision": 0.93, "microRecall": 0.93,
		"macroF1": 0.93, "macroPrecision": 0.9301, "macroRecall": 0.93,
		"weightedF1": 0.93, "weightedPrecision": 0.9301, "weightedRecall": 0.93,
	}
	switch typ {
	case "TEXT_CLASSIFICATION":
		metrics["accuracy"] = 0.93
		return map[string]any{"modelType": typ, "metrics": metrics, "labels": labels, "confusionMatrix": confusion,
			"classMetrics": []any{
				map[string]any{"label": "negative", "f1": 0.9293, "precision": 0.9388, "recall": 0.92, "support": 50.0},
				map[string]any{"label": "positive", "f1": 0.9307, "precision": 0.9216, "recall": 0.94, "support": 50.0},
			}}
	case "NAMED_ENTITY_RECOGNITION":
		labels = []any{"PERSON", "ORGANIZATION"}
		return map[string]any{"modelType": typ, "metrics": metrics, "labels": labels, "confusionMatrix": map[string]any{},
			"entityMetrics": []any{
				map[string]any{"label": "PERSON", "f1": 0.95, "precision": 0.96, "recall": 0.94},
				map[string]any{"label": "ORGANIZATION", "f1": 0.91, "precision": 0.9, "recall": 0.92},
			}}
	}
	return nil
}
