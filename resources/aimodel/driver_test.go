package aimodel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
	"github.com/reconcile-dev/reconcile/resources/ailanguage/ailanguagetest"
	"github.com/reconcile-dev/reconcile/resources/aimodel"
)

type attrs = resources.Attrs

func inputs(env *ailanguagetest.Env, name string) attrs {
	return attrs{
		"compartmentId": env.Compartment, "projectId": env.Project, "displayName": name,
		"modelDetails": map[string]any{"modelType": "TEXT_CLASSIFICATION"},
		"trainingDataset": map[string]any{"datasetType": "OBJECT_STORAGE", "locationDetails": map[string]any{
			"locationType": "OBJECT_LIST", "namespace": "acme", "bucket": "reviews", "objectNames": []any{"train.jsonl"}}},
		"testStrategy": map[string]any{"strategyType": "TEST_AND_VALIDATION_DATASET",
			"testingDataset": map[string]any{"datasetType": "DATA_SCIENCE_LABELING", "datasetId": "ocid1.datalabelingdataset.oc1.iad.test"}},
	}
}

// TestDriverContract trains a model (progress reported while it trains),
// reads back exactly the normalized inputs with the evaluation results in
// the provider's shape, updates what UpdateModel can change, and deletes
// it.
func TestDriverContract(t *testing.T) {
	t.Parallel()
	// The emulator's clock stands still until the first progress report,
	// then jumps past the training: the model is seen CREATING, then
	// ACTIVE, however slow the machine.
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := ailanguagetest.New(t, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	env.Emu.SetTraining(time.Minute, "")
	d, ctx := aimodel.New(env.Config), t.Context()

	want := inputs(env, "classifier")
	var msgs []string
	pctx := resources.WithProgress(ctx, func(ev resources.ProgressEvent) {
		msgs = append(msgs, ev.Message)
		if len(msgs) == 1 {
			mu.Lock()
			now = now.Add(time.Hour)
			mu.Unlock()
		}
	})
	id, got, err := d.Create(pctx, want)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !strings.HasPrefix(id, "ocid1.ailanguagemodel.") || got["state"] != "ACTIVE" || got["version"] == nil {
		t.Errorf("Create = %q, state %v version %v", id, got["state"], got["version"])
	}
	if len(msgs) < 2 || !strings.Contains(msgs[0], "state CREATING, work request") {
		t.Errorf("progress while training = %q, want several reports of the state and the work request", msgs)
	}
	n := d.Normalize(want)
	for _, k := range []string{"compartmentId", "projectId", "displayName", "modelDetails", "trainingDataset", "testStrategy"} {
		if !resources.Equal(got[k], n[k]) {
			t.Errorf("%s = %#v, want %#v", k, got[k], n[k])
		}
	}
	md := n["modelDetails"].(map[string]any)
	if md["languageCode"] != "en" || md["classificationMode"] == nil {
		t.Errorf("Normalize(modelDetails) = %v, want the service's defaults filled", md)
	}
	res, _ := got["evaluationResults"].([]any)
	if len(res) != 1 {
		t.Fatalf("evaluationResults = %#v, want one entry", got["evaluationResults"])
	}
	r := res[0].(map[string]any)
	metrics, _ := r["metrics"].([]any)
	cm, _ := r["confusionMatrix"].(string)
	if r["modelType"] != "TEXT_CLASSIFICATION" || len(metrics) != 1 || !strings.HasPrefix(cm, "{") || metrics[0].(map[string]any)["accuracy"] != 0.93 {
		t.Errorf("evaluationResults[0] = %#v, want metrics as a list of one and the confusion matrix as JSON text", r)
	}

	next := resources.Attrs{}
	for k, v := range want {
		next[k] = v
	}
	next["displayName"], next["description"], next["freeformTags"] = "classifier-v1", "first", map[string]any{"stage": "prod"}
	got, err = d.Update(ctx, id, want, next)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got["displayName"] != "classifier-v1" || got["description"] != "first" || got["state"] != "ACTIVE" {
		t.Errorf("after Update: %v", got)
	}
	if err := d.Delete(ctx, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := d.Read(ctx, id); !errors.Is(err, resources.ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
}

// TestTrainingFails: a failed training comes back with the model's id and
// an error matching ErrUnusable that holds the service's lifecycleDetails.
func TestTrainingFails(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	const why = "Training failed: the training dataset contains no labelled records"
	env.Emu.SetTraining(0, why)
	d := aimodel.New(env.Config)
	id, got, err := d.Create(t.Context(), inputs(env, "doomed"))
	if id == "" || !errors.Is(err, resources.ErrUnusable) || !strings.Contains(err.Error(), why) {
		t.Fatalf("Create = %q, %v; want the id and an unusable error with the reason", id, err)
	}
	if got["state"] != "FAILED" || got["lifecycleDetails"] != why {
		t.Errorf("attributes of the failed model: %v", got)
	}
}

// TestTrainingInterrupted: a wait for a training that ends before the
// training does (customTimeouts.create passed, or the apply stopped) returns
// the id with an error that says in which state it stopped waiting,
// matching neither ErrUnusable nor ErrRefused: the outcome is unknown, and
// the engine keeps the intent. The wait is cancelled at its first progress
// report, when the create has answered.
func TestTrainingInterrupted(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	env.Emu.SetTraining(time.Hour, "")
	d := aimodel.New(env.Config)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ctx = resources.WithProgress(ctx, func(resources.ProgressEvent) { cancel() })
	id, _, err := d.Create(ctx, inputs(env, "slow"))
	if id == "" || err == nil || errors.Is(err, resources.ErrUnusable) || errors.Is(err, resources.ErrRefused) ||
		!strings.Contains(err.Error(), "waiting for the model to become ACTIVE (still state CREATING") {
		t.Errorf("Create = %q, %v; want the id and an interrupted wait naming the state", id, err)
	}
}

// TestRefusals: bad inputs and what OCI refuses match ErrRefused and make
// nothing.
func TestRefusals(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	d, ctx := aimodel.New(env.Config), t.Context()
	noProject := inputs(env, "x")
	delete(noProject, "projectId")
	badProject := inputs(env, "x")
	badProject["projectId"] = "ocid1.ailanguageproject.oc1.iad.nope"
	noObjects := inputs(env, "x")
	noObjects["trainingDataset"] = map[string]any{"datasetType": "OBJECT_STORAGE", "locationDetails": map[string]any{"locationType": "OBJECT_LIST", "namespace": "a", "bucket": "b", "objectNames": []any{}}}
	for name, tc := range map[string]struct {
		want attrs
		text string
	}{
		"no project":      {noProject, "projectId: required"},
		"unknown project": {badProject, "RelatedResourceNotAuthorizedOrNotFound"},
		"no objects":      {noObjects, "objectNames"},
	} {
		id, _, err := d.Create(ctx, tc.want)
		if id != "" || !errors.Is(err, resources.ErrRefused) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: Create = %q, %v; want a refusal saying %q", name, id, err, tc.text)
		}
	}
}

// TestRecover replays an interrupted training's create: the model the
// first create made comes back once trained, and no second one is made.
func TestRecover(t *testing.T) {
	t.Parallel()
	env := ailanguagetest.New(t, nil)
	env.Emu.SetTraining(0, "")
	d, ctx := aimodel.New(env.Config), t.Context()
	want := inputs(env, "recovered")
	id, _, err := d.Create(resources.WithIdempotencyToken(ctx, "tok-m"), want)
	if err != nil {
		t.Fatal(err)
	}
	got, a, err := d.Recover(ctx, resources.RecoverRequest{Token: "tok-m", Want: want, Time: time.Now()})
	if err != nil || got != id || a["state"] != "ACTIVE" {
		t.Errorf("Recover = %q, %v, %v; want %q ACTIVE", got, a["state"], err, id)
	}
	if _, _, err := d.Recover(ctx, resources.RecoverRequest{Token: "tok-old", Want: want, Time: time.Now().Add(-30 * time.Hour)}); err == nil || !strings.Contains(err.Error(), "retry tokens") {
		t.Errorf("Recover of a day-old create: %v, want it refused", err)
	}
}
